package filters

// The policies of the filters a table may embed. Adding one here (and a
// row with a table code in type.go) is all a new table filter needs.
func init() {
	registerPolicy(TypeBinaryFuse8, func(PolicyParams) (Policy, error) {
		return staticPolicy{TypeBinaryFuse8, func(hs []uint64) (Filter, error) { return BuildBinaryFuse8FromHashes(hs) }}, nil
	})
	registerPolicy(TypeBinaryFuse16, func(PolicyParams) (Policy, error) {
		return staticPolicy{TypeBinaryFuse16, func(hs []uint64) (Filter, error) { return BuildBinaryFuse16FromHashes(hs) }}, nil
	})
	registerPolicy(TypeXor8, func(PolicyParams) (Policy, error) {
		return staticPolicy{TypeXor8, func(hs []uint64) (Filter, error) { return BuildXor8FromHashes(hs) }}, nil
	})
	registerPolicy(TypeRibbon, func(p PolicyParams) (Policy, error) {
		if p.RibbonBits < 1 || p.RibbonBits > 16 {
			return nil, invalidf("ribbon result bits %d outside [1, 16]", p.RibbonBits)
		}
		opts := RibbonOptions{ResultBits: p.RibbonBits}
		return staticPolicy{TypeRibbon, func(hs []uint64) (Filter, error) { return BuildRibbonFromHashes(hs, opts) }}, nil
	})
	registerPolicy(TypeBinaryFuse, func(p PolicyParams) (Policy, error) {
		if err := p.Fuse.validate(); err != nil {
			return nil, err
		}
		opts := p.Fuse
		return staticPolicy{TypeBinaryFuse, func(hs []uint64) (Filter, error) { return BuildBinaryFuseFromHashes(hs, opts) }}, nil
	})
	registerPolicy(TypeBloom, func(p PolicyParams) (Policy, error) {
		return bloomPolicy(TypeBloom, p, func(n int, fp float64) (hashAdder, error) { return NewBloom(n, fp) })
	})
	registerPolicy(TypeBlockedBloom, func(p PolicyParams) (Policy, error) {
		return bloomPolicy(TypeBlockedBloom, p, func(n int, fp float64) (hashAdder, error) { return NewBlockedBloom(n, fp) })
	})
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
		f, err := newFilter(len(hs), fp)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			f.AddHash(h)
		}
		return f, nil
	}}, nil
}
