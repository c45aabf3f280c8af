package sstable

import (
	"fmt"

	"github.com/sievekv/sievekv/filters"
)

// filterPolicy returns the policy a writer builds its filter with:
// o.FilterPolicy when set, else the registered policy of o.Filter sized by
// o's knobs; nil for filters.TypeNone. The table format knows nothing else of the
// filter: the policy turns key hashes into bytes, filters.Unmarshal turns
// them into a prober.
func (o WriterOptions) filterPolicy() (filters.Policy, error) {
	if o.FilterPolicy != nil {
		return o.FilterPolicy, nil
	}
	if o.Filter == filters.TypeNone {
		return nil, nil
	}
	return filters.NewPolicy(o.Filter, filters.PolicyParams{BloomBitsPerKey: o.BloomBitsPerKey, RibbonBits: o.RibbonBits})
}

// buildFilter builds the table's filter from the hashes of its distinct
// user keys and returns its encoding. Two distinct user keys may still
// share a 64-bit hash; every policy accepts duplicates.
func buildFilter(p filters.Policy, hs []uint64) ([]byte, error) {
	if _, ok := p.Type().TableCode(); !ok {
		return nil, fmt.Errorf("filter type %s cannot be recorded in a table", p.Type())
	}
	return p.Build(hs)
}
