package filters

import (
	"fmt"
	"math"
)

// Description names a built filter's family and width and the
// false-positive rate it is expected to have, for tools and metrics.
type Description struct {
	Type Type
	// Kind is Type with the width: "binary-fuse 4-wise 9-bit",
	// "ribbon 9-bit", "bloom k=7", "binary-fuse-8".
	Kind string
	// FPRate is the expected false-positive rate: 2^-width for the
	// fingerprint filters, (1-e^(-kn/m))^k for Bloom, 0 when unknown.
	FPRate float64
}

// Describe returns f's description; keys is the number of distinct keys f
// holds, which a Bloom filter's FP rate depends on and which it does not
// record.
func Describe(f Filter, keys int) Description {
	switch g := f.(type) {
	case *BinaryFuse8:
		return Description{TypeBinaryFuse8, TypeBinaryFuse8.String(), 1.0 / 256}
	case *BinaryFuse16:
		return Description{TypeBinaryFuse16, TypeBinaryFuse16.String(), 1.0 / 65536}
	case *Xor8:
		return Description{TypeXor8, TypeXor8.String(), 1.0 / 256}
	case *BinaryFuse:
		o := g.Options()
		return Description{TypeBinaryFuse, fmt.Sprintf("binary-fuse %d-wise %d-bit", o.Arity, o.FingerprintBits),
			math.Ldexp(1, -o.FingerprintBits)}
	case *Ribbon:
		r := g.Options().ResultBits
		return Description{TypeRibbon, fmt.Sprintf("ribbon %d-bit", r), math.Ldexp(1, -r)}
	case *Bloom:
		fp := 0.0
		if keys > 0 {
			fp = bloomFP(g.m, g.k, keys)
		}
		return Description{TypeBloom, fmt.Sprintf("bloom k=%d", g.k), fp}
	case *BlockedBloom:
		return Description{TypeBlockedBloom, fmt.Sprintf("blocked-bloom k=%d", g.k), 0}
	}
	return Description{Kind: fmt.Sprintf("%T", f)}
}
