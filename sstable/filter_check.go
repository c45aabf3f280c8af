package sstable

import (
	"fmt"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
)

// FilterMismatchError reports a table whose properties, footer and filter
// block disagree on its filter (T9). Each part passed its own checksum, so
// the disagreement itself is the corruption: it wraps base.ErrCorruption.
type FilterMismatchError struct {
	// File names the table.
	File string
	// Properties is the filter type the properties block records.
	Properties filters.Type
	// FooterHasFilter is whether the footer locates a filter block.
	FooterHasFilter bool
	// Encoded is the type the filter block's envelope names (zero without
	// a filter block).
	Encoded filters.Type
}

func (e *FilterMismatchError) Error() string {
	block := "no filter block"
	if e.FooterHasFilter {
		block = fmt.Sprintf("a filter block of type %s", e.Encoded)
	}
	return fmt.Sprintf("sstable: %s: properties record filter %s, footer and filter block hold %s: %v",
		e.File, e.Properties, block, base.ErrCorruption)
}

func (e *FilterMismatchError) Unwrap() error { return base.ErrCorruption }

// checkFilterAgreement keeps T9: a table has a filter block exactly when its
// properties name a filter and it holds a key (the writer builds none for an
// empty table), and that block's envelope names the properties' type.
// encoded is the envelope's type, zero when the footer has no filter block.
func (r *Reader) checkFilterAgreement(encoded filters.Type) error {
	hasBlock := r.footer.filter.length > 0
	wantBlock := r.props.FilterType != filters.TypeNone && r.props.NumEntries > 0
	if hasBlock == wantBlock && (!hasBlock || encoded == r.props.FilterType) {
		return nil
	}
	return &FilterMismatchError{File: r.name, Properties: r.props.FilterType, FooterHasFilter: hasBlock, Encoded: encoded}
}
