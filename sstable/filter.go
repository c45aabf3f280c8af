package sstable

import (
	"fmt"
	"math"

	"github.com/sievekv/sievekv/filters"
)

// buildFilter builds the table's filter from the hashes of its distinct
// user keys and returns its encoding and the number of keys. Two distinct
// user keys may still share a 64-bit hash; every builder used here accepts
// duplicates (the static builders deduplicate only after a failed attempt,
// so the common case pays no sort), and a Bloom filter sets the same bits.
func buildFilter(opts WriterOptions, hs []uint64) ([]byte, int, error) {
	var f filters.Filter
	var err error
	switch opts.Filter {
	case FilterBinaryFuse8:
		f, err = filters.BuildBinaryFuse8FromHashes(hs)
	case FilterBinaryFuse16:
		f, err = filters.BuildBinaryFuse16FromHashes(hs)
	case FilterXor8:
		f, err = filters.BuildXor8FromHashes(hs)
	case FilterRibbon:
		f, err = filters.BuildRibbonFromHashes(hs, filters.RibbonOptions{ResultBits: opts.RibbonBits})
	case FilterBloom, FilterBlockedBloom:
		// A Bloom filter at b bits/key has fp = exp(-b * ln2^2) with the
		// optimal number of probes (Broder & Mitzenmacher, 2004).
		fp := math.Exp(-opts.BloomBitsPerKey * math.Ln2 * math.Ln2)
		fp = min(max(fp, 1e-12), 0.5)
		if opts.Filter == FilterBloom {
			var b *filters.Bloom
			if b, err = filters.NewBloom(len(hs), fp); err == nil {
				for _, h := range hs {
					b.AddHash(h)
				}
				f = b
			}
		} else {
			var b *filters.BlockedBloom
			if b, err = filters.NewBlockedBloom(len(hs), fp); err == nil {
				for _, h := range hs {
					b.AddHash(h)
				}
				f = b
			}
		}
	default:
		return nil, 0, fmt.Errorf("unknown filter type %d", uint8(opts.Filter))
	}
	if err != nil {
		return nil, 0, err
	}
	enc, err := f.MarshalBinary()
	return enc, len(hs), err
}
