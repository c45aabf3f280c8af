package filters

import (
	"errors"
	"testing"
)

// bloomFuzzSeeds returns valid encodings of every Bloom-family type (empty,
// small and multi-stage), the seeds for every fuzz target here.
func bloomFuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, tc := range bloomFamilyCases {
		for _, n := range []int{1, 20} {
			f, err := tc.fresh(n, 0.1)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, bloomMustMarshal(t, f))
			for _, k := range bloomKeys('p', 1, 3*n) {
				f.Add(k)
			}
			seeds = append(seeds, bloomMustMarshal(t, f))
		}
	}
	return seeds
}

// bloomFuzzCheck is the property every decoder must keep on arbitrary bytes
// (invariant F3): it errors with ErrCorrupt, or it yields a filter whose
// encoding is byte-for-byte the input (encodings are canonical) and which
// answers queries without panicking.
func bloomFuzzCheck(t *testing.T, data []byte, decode func([]byte) (Filter, error)) {
	f, err := decode(data)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error does not wrap ErrCorrupt: %v", err)
		}
		return
	}
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatalf("decoded filter does not re-encode: %v", err)
	}
	if string(enc) != string(data) {
		t.Fatalf("decode/encode is not the identity:\n in  %x\n out %x", data, enc)
	}
	for _, k := range []string{"", "a", "fuzz"} {
		f.MayContain([]byte(k))
	}
}

// bloomFuzzTyped runs bloomFuzzCheck on data as a full encoding, and on data
// as the body of a correctly sealed envelope of type t: the checksum stops
// almost every mutation of a full encoding, so the second form is what
// exercises the body decoder.
func bloomFuzzTyped(t *testing.T, data []byte, typ Type, version uint8, decode func([]byte) (Filter, error)) {
	bloomFuzzCheck(t, data, decode)
	bloomFuzzCheck(t, sealEnvelope(typ, version, data), decode)
}

// bloomFuzzTarget is a Fuzz<Type>UnmarshalBinary: the family's seeds, each
// input checked by bloomFuzzTyped with decode.
func bloomFuzzTarget(f *testing.F, typ Type, version uint8, decode func([]byte) (Filter, error)) {
	bloomFuzzAddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { bloomFuzzTyped(t, data, typ, version, decode) })
}

func bloomFuzzAddSeeds(f *testing.F) {
	for _, s := range bloomFuzzSeeds(f) {
		f.Add(s)
		if len(s) > envelopeHeaderSize+envelopeTrailer {
			f.Add(s[envelopeHeaderSize : len(s)-envelopeTrailer]) // the bare body
		}
	}
}

// FuzzUnmarshal feeds arbitrary bytes to filters.Unmarshal, seeded with valid
// encodings of every Bloom-family type.
func FuzzUnmarshal(f *testing.F) {
	bloomFuzzAddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		bloomFuzzCheck(t, data, Unmarshal)
	})
}

func FuzzBloomUnmarshalBinary(f *testing.F) {
	bloomFuzzTarget(f, TypeBloom, bloomVersion, unmarshalNew[Filter, Bloom])
}

func FuzzBlockedBloomUnmarshalBinary(f *testing.F) {
	bloomFuzzTarget(f, TypeBlockedBloom, blockedBloomVersion, unmarshalNew[Filter, BlockedBloom])
}

func FuzzCountingBloomUnmarshalBinary(f *testing.F) {
	bloomFuzzAddSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		bloomFuzzTyped(t, data, TypeCountingBloom, countingBloomVersion, func(d []byte) (Filter, error) {
			var c CountingBloom
			if err := c.UnmarshalBinary(d); err != nil {
				return nil, err
			}
			// Add and Remove must not panic on decoded state either; work on
			// a second copy so the identity check sees the decoded bytes.
			var scratch CountingBloom
			_ = scratch.UnmarshalBinary(d)
			scratch.Add([]byte("y"))
			if err := scratch.Remove([]byte("x")); err != nil && !errors.Is(err, ErrNotMember) {
				t.Fatalf("Remove on decoded filter: %v", err)
			}
			return &c, nil
		})
	})
}

func FuzzScalableBloomUnmarshalBinary(f *testing.F) {
	bloomFuzzTarget(f, TypeScalableBloom, scalableBloomVersion, unmarshalNew[Filter, ScalableBloom])
}
