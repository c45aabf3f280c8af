package filters

import "sync"

// The policies of the filters a table may embed. Adding one here (and a
// row with a table code in type.go) is all a new table filter needs.
func init() {
	registerPolicy(TypeBinaryFuse8, func(PolicyParams) (Policy, error) {
		return staticPolicy{TypeBinaryFuse8, func(hs []uint64) (Filter, error) {
			return withBuilder(&fuseBuilders, func(b *FuseBuilder) (Filter, error) { return b.BuildBinaryFuse8(hs) })
		}}, nil
	})
	registerPolicy(TypeBinaryFuse16, func(PolicyParams) (Policy, error) {
		return staticPolicy{TypeBinaryFuse16, func(hs []uint64) (Filter, error) {
			return withBuilder(&fuseBuilders, func(b *FuseBuilder) (Filter, error) { return b.BuildBinaryFuse16(hs) })
		}}, nil
	})
	registerPolicy(TypeXor8, func(PolicyParams) (Policy, error) {
		return staticPolicy{TypeXor8, func(hs []uint64) (Filter, error) {
			return withBuilder(&fuseBuilders, func(b *FuseBuilder) (Filter, error) { return b.BuildXor8(hs) })
		}}, nil
	})
	registerPolicy(TypeRibbon, func(p PolicyParams) (Policy, error) {
		if p.RibbonBits < 1 || p.RibbonBits > 16 {
			return nil, invalidf("ribbon result bits %d outside [1, 16]", p.RibbonBits)
		}
		opts := RibbonOptions{ResultBits: p.RibbonBits}
		return staticPolicy{TypeRibbon, func(hs []uint64) (Filter, error) {
			return withBuilder(&ribbonBuilders, func(b *RibbonBuilder) (Filter, error) { return b.Build(hs, opts) })
		}}, nil
	})
	registerPolicy(TypeBinaryFuse, func(p PolicyParams) (Policy, error) {
		if err := p.Fuse.validate(); err != nil {
			return nil, err
		}
		opts := p.Fuse
		return staticPolicy{TypeBinaryFuse, func(hs []uint64) (Filter, error) {
			return withBuilder(&fuseBuilders, func(b *FuseBuilder) (Filter, error) { return b.BuildBinaryFuse(hs, opts) })
		}}, nil
	})
	registerPolicy(TypeBloom, func(p PolicyParams) (Policy, error) {
		return bloomPolicy(TypeBloom, p, func(n int, fp float64) (hashAdder, error) { return NewBloom(n, fp) })
	})
	registerPolicy(TypeBlockedBloom, func(p PolicyParams) (Policy, error) {
		return bloomPolicy(TypeBlockedBloom, p, func(n int, fp float64) (hashAdder, error) { return NewBlockedBloom(n, fp) })
	})
}

// A table's filter is built once per flush or compaction output, and the
// builders' scratch (the Ribbon's band and sort buffers, the fuse peeling
// arrays) made fresh for each was 44% of the bytes the write path
// allocated (kv BenchmarkSet, alloc_space profile). The policies take
// builders from these pools: a built filter never aliases its builder, and
// a pool lets the GC drop idle builders, so a burst of large tables does
// not pin their scratch.
var (
	ribbonBuilders = sync.Pool{New: func() any { return new(RibbonBuilder) }}
	fuseBuilders   = sync.Pool{New: func() any { return new(FuseBuilder) }}
)

// withBuilder runs build with a builder from pool and returns it there.
func withBuilder[B any](pool *sync.Pool, build func(*B) (Filter, error)) (Filter, error) {
	b := pool.Get().(*B)
	defer pool.Put(b)
	return build(b)
}

// hashAdder is a Bloom-family filter filled one hash at a time.
type hashAdder interface {
	Filter
	AddHash(h uint64)
}

// bloomPolicy sizes a Bloom-family filter for the number of hashes at the
// false-positive rate its bits per key give. Duplicate hashes set the same
// bits, so they only cost the space sized for them.
func bloomPolicy(t Type, p PolicyParams, newFilter func(n int, fp float64) (hashAdder, error)) (Policy, error) {
	if !(p.BloomBitsPerKey > 0) {
		return nil, invalidf("%s bits per key must be positive, got %v", t, p.BloomBitsPerKey)
	}
	fp := bloomFPRate(p.BloomBitsPerKey)
	return staticPolicy{t, func(hs []uint64) (Filter, error) {
		// Sized for at least one key: an empty set still gets a filter
		// (one that answers "absent"), as the static policies give.
		f, err := newFilter(max(len(hs), 1), fp)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			f.AddHash(h)
		}
		return f, nil
	}}, nil
}
