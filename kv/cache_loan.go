package kv

// The block cache borrows what the memtables are allowed and not using.
//
// A DB's memory is its block cache (Options.BlockCacheSize) plus its
// memtables, which fill to MemTableSize before they are flushed. A phase
// of reads leaves the memtables empty, and the memory a writing phase gave
// them then serves nothing. Pebble counts its memtables against its block
// cache, so its cache takes that memory back when they are empty; here
// the cache's capacity is BlockCacheSize plus whatever of
// memTableLoanTables memtables' worth the live memtables do not hold
// (their ApproximateSize), recomputed as the memtables fill and flush. So
// the cache and the memtables together stay within BlockCacheSize +
// memTableLoanTables x MemTableSize while the memtables are within that
// allowance (one loan step more at most, below), and never above what
// they could reach before the loan existed: the loan is never lent when
// the memtables need the memory, and BlockCacheSize is the floor.
// Options.NoCacheLoan keeps the cache at BlockCacheSize.
// (docs/design.md, "The read path", "The cache borrows the memtables'
// idle memory".)

// memTableLoanTables is how many memtables' worth the cache may borrow:
// the mutable memtable and one being flushed, the memory a steady writer
// keeps in use.
const memTableLoanTables = 2

// cacheLoanSteps is how finely the loan follows the memtables: it moves
// in steps of a sixteenth of the allowance, so a memtable filling up
// resizes the cache sixteen times at most, never per write.
const cacheLoanSteps = 16

// cacheLoan is the state of the block cache's loan. Guarded by DB.mu.
type cacheLoan struct {
	allowance int64 // memTableLoanTables x MemTableSize; 0 without a cache
	step      int64
	lent      int64 // the capacity above BlockCacheSize now
}

// newCacheLoan sizes the loan for o; the cache it serves starts at
// BlockCacheSize and lends nothing until lendToCacheLocked runs.
func newCacheLoan(o Options) cacheLoan {
	if o.BlockCacheSize <= 0 || o.NoCacheLoan {
		return cacheLoan{}
	}
	a := int64(memTableLoanTables) * int64(o.MemTableSize)
	return cacheLoan{allowance: a, step: max(a/cacheLoanSteps, 1)}
}

// lendToCacheLocked lends the block cache the allowance the live
// memtables leave unused, rounded down to a whole step, and takes it back
// as they fill: called after every commit group and every flush, it
// costs a few atomic loads when the loan does not move. REQUIRES: d.mu.
func (d *DB) lendToCacheLocked() {
	l := &d.cacheLoan
	if l.allowance == 0 {
		return
	}
	used := int64(0)
	if d.mem != nil {
		used = d.mem.ApproximateSize()
	}
	for _, m := range d.imm {
		used += m.ApproximateSize()
	}
	lend := max(l.allowance-used, 0) / l.step * l.step
	if lend == l.lent {
		return
	}
	l.lent = lend
	d.cache.SetCapacity(d.opts.BlockCacheSize + lend)
}
