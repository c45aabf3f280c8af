package sstable

import "github.com/sievekv/sievekv/filters"

// FilterDescription names the table's filter with its width and expected
// false-positive rate (filters.Describe); the zero Description with
// TypeNone for a table without one.
func (r *Reader) FilterDescription() filters.Description {
	if r.filter == nil {
		return filters.Description{Type: filters.TypeNone, Kind: filters.TypeNone.String()}
	}
	return filters.Describe(r.filter, int(r.props.FilterKeys))
}
