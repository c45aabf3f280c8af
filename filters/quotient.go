package filters

import (
	"fmt"
	"math"
)

// Quotient is a quotient filter (Bender et al., "Don't Thrash: How to Cache
// Your Hash on Flash", VLDB 2012): a compact open-addressing table of 2^q
// slots. A key's p = q+r bit fingerprint splits into a q-bit quotient, its
// home slot, and an r-bit remainder, which is what the slot stores. All
// remainders of one quotient sit together in a run, sorted ascending; runs
// follow each other in quotient order, wrapping from the last slot to the
// first. It supports Add and Remove (as a multiset: two Adds of one key need
// two Removes) and can double its capacity without the original keys.
//
// Layout: slot i is one packedArray entry of r+3 bits holding
//
//	bit 0   occupied      some stored key has quotient i (a run for i exists)
//	bit 1   continuation  this slot continues the run of the slot before it
//	bit 2   shifted       this slot's remainder is not in its home slot
//	bits 3… remainder
//
// The layout is canonical (invariant Q4 below): it depends only on the
// multiset of fingerprints, not on the order of the operations that built it.
//
// Invariants (kept by Add, Remove and Resize; checked by the decoder):
//
//	Q1 a slot is empty iff its three metadata bits are 0, and an empty slot
//	   stores remainder 0; at least one slot is always empty;
//	Q2 occupied(i) iff a run for quotient i exists;
//	Q3 runs are sorted by remainder and follow each other in quotient order;
//	Q4 every remainder sits as far left as Q3 allows: at its home slot, or
//	   right after the previous remainder (so shifted(i) iff i is not home).
//
// As with every fingerprint filter, Remove must only be called for keys
// known to be members (see the package doc). A Quotient is not safe for
// concurrent mutation.
//
// The zero value (a Quotient no constructor or UnmarshalBinary made) is an
// empty filter with no slots: queries answer "absent", Remove finds nothing,
// Len and LoadFactor are 0, Add and Resize return an error wrapping ErrFull
// (it has nowhere to put a key) and MarshalBinary one wrapping
// ErrInvalidArgument (it has no encoding). A declared-but-unmade filter thus fails loudly on
// its first Add instead of indexing an empty table.
type Quotient struct {
	slots    packedArray // 2^q entries of r+3 bits (see the type doc)
	q, r     uint
	mask     uint64 // 2^q - 1
	remMask  uint64 // 2^r - 1
	count    uint64
	maxLoad  float64
	maxCount uint64   // floor(2^q · maxLoad), < 2^q so a slot stays empty (Q1)
	pending  []uint64 // scratch for scan
}

const (
	qfOccupied     = 1
	qfContinuation = 2
	qfShifted      = 4
	qfMeta         = 7

	// QuotientDefaultLoad is NewQuotient's load limit. Cluster length, and
	// with it the cost of every operation, grows like 1/(1-α)²; at 0.75 the
	// average insert shifts a handful of slots (Bender et al. §2 recommend
	// α ≤ 0.75).
	QuotientDefaultLoad = 0.75
	// QuotientMaxLoad is the highest load limit NewQuotientWithLoad accepts.
	QuotientMaxLoad = 0.95

	// quotientMaxQ bounds the table at 2^48 slots, far beyond any memory,
	// so that sizing arithmetic cannot overflow.
	quotientMaxQ = 48
	// quotientMaxR keeps a slot (r+3 bits) within one packedArray entry.
	quotientMaxR = 61
	// quotientVersion is the body format version: 1 is the first (and only)
	// layout, described in docs/format.md, "Quotient filter (type 10)".
	quotientVersion = 1
)

var errQuotientFull = fmt.Errorf("filters: quotient: load limit reached: %w", ErrFull)

// NewQuotient returns an empty quotient filter for n keys at false-positive
// rate fpRate with the default load limit 0.75 (QuotientDefaultLoad).
func NewQuotient(n int, fpRate float64) (*Quotient, error) {
	return NewQuotientWithLoad(n, fpRate, QuotientDefaultLoad)
}

// NewQuotientWithLoad is NewQuotient with a load limit maxLoad in
// (0, 0.95]: Add refuses the key that would take the load past it. Higher
// limits save space and cost time (longer clusters).
//
// Sizing: 2^q slots, the fewest with floor(2^q·maxLoad) ≥ n; remainders of
// r = ceil(log2(maxLoad/fpRate)) bits (at least 1). A query for an absent key
// is a false positive iff its run holds its remainder; at load α a run holds
// Poisson(α) remainders, so the rate is 1-exp(-α/2^r) ≤ α/2^r ≤ fpRate.
func NewQuotientWithLoad(n int, fpRate, maxLoad float64) (*Quotient, error) {
	if err := checkSizing(n, fpRate); err != nil {
		return nil, err
	}
	if !(maxLoad > 0 && maxLoad <= QuotientMaxLoad) {
		return nil, invalidf("quotient: load limit must be in (0, %v], got %v", QuotientMaxLoad, maxLoad)
	}
	r := uint(1)
	if need := math.Ceil(math.Log2(maxLoad / fpRate)); need > 1 {
		r = uint(need)
	}
	q := uint(1)
	for q <= quotientMaxQ && quotientMaxCount(q, maxLoad) < uint64(n) {
		q++
	}
	if q > quotientMaxQ || q+r > 64 || r > quotientMaxR {
		return nil, invalidf("quotient: n = %d at rate %v needs q = %d, r = %d; q+r must be ≤ 64 and q ≤ %d",
			n, fpRate, q, r, quotientMaxQ)
	}
	return newQuotientShape(q, r, maxLoad), nil
}

// quotientMaxCount is the number of keys 2^q slots take at load maxLoad,
// always leaving one slot empty.
func quotientMaxCount(q uint, maxLoad float64) uint64 {
	size := uint64(1) << q
	m := uint64(math.Floor(float64(size) * maxLoad))
	if m >= size {
		m = size - 1
	}
	return m
}

// newQuotientShape builds an empty filter with the given parameters, which
// the caller has validated.
func newQuotientShape(q, r uint, maxLoad float64) *Quotient {
	return &Quotient{
		slots:    newPackedArray(1<<q, r+3),
		q:        q,
		r:        r,
		mask:     1<<q - 1,
		remMask:  1<<r - 1,
		maxLoad:  maxLoad,
		maxCount: quotientMaxCount(q, maxLoad),
	}
}

// split takes the top q+r bits of the key hash as the fingerprint: the high
// q bits are the quotient, the low r bits the remainder. Resize moves one
// bit from the remainder to the quotient, keeping q+r and so every key's
// fingerprint unchanged.
func (f *Quotient) split(h uint64) (fq, fr uint64) {
	fp := h >> (64 - (f.q + f.r))
	return fp >> f.r, fp & f.remMask
}

func (f *Quotient) inc(i uint64) uint64 { return (i + 1) & f.mask }
func (f *Quotient) dec(i uint64) uint64 { return (i - 1) & f.mask }

// runStart returns the slot where the run of quotient fq starts, or would
// start if it were added, which requires occupied(fq) to be set. It walks
// back to the nearest unshifted slot (a run at its home, Q4) and then
// forward run by run, pairing each run with the next occupied quotient (Q3).
func (f *Quotient) runStart(fq uint64) uint64 {
	b := fq
	for f.slots.get(b)&qfShifted != 0 {
		b = f.dec(b)
	}
	s := b
	for b != fq {
		s = f.inc(s)
		for f.slots.get(s)&qfContinuation != 0 {
			s = f.inc(s)
		}
		b = f.inc(b)
		for f.slots.get(b)&qfOccupied == 0 {
			b = f.inc(b)
		}
	}
	return s
}

// MayContain reports whether key may have been added.
func (f *Quotient) MayContain(key []byte) bool {
	// locate directly, not through MayContainHash, which is too large to
	// inline: one call per query instead of two.
	_, _, found := f.locate(f.split(Hash(key)))
	return found
}

// MayContainHash is MayContain for a key whose Hash the caller holds.
func (f *Quotient) MayContainHash(h uint64) bool {
	_, _, found := f.locate(f.split(h))
	return found
}

// locate finds remainder fr in the run of quotient fq, the search a query
// and a Remove share: it returns the run's first slot s and, when found, the
// slot pos holding fr. found is false when fq has no run or its run lacks
// fr; the run is sorted (Q3), so the scan stops at the first larger
// remainder.
func (f *Quotient) locate(fq, fr uint64) (s, pos uint64, found bool) {
	if f.slots.n == 0 {
		// The zero value has no slots: an empty filter (see the type doc).
		return 0, 0, false
	}
	if f.slots.get(fq)&qfOccupied == 0 {
		return 0, 0, false
	}
	s = f.runStart(fq)
	for pos = s; ; {
		rem := f.slots.get(pos) >> 3
		if rem >= fr {
			return s, pos, rem == fr
		}
		pos = f.inc(pos)
		if f.slots.get(pos)&qfContinuation == 0 {
			return s, pos, false
		}
	}
}

// Add inserts key. Past the load limit it returns an error wrapping ErrFull
// and leaves the filter unchanged.
func (f *Quotient) Add(key []byte) error { return f.AddHash(Hash(key)) }

// AddHash is Add for a key whose Hash the caller holds.
func (f *Quotient) AddHash(h uint64) error {
	if f.count >= f.maxCount {
		return errQuotientFull
	}
	fq, fr := f.split(h)
	f.insert(fq, fr)
	return nil
}

// insert adds the fingerprint (fq, fr); the caller has checked the load
// limit, so an empty slot exists and the shift below ends.
func (f *Quotient) insert(fq, fr uint64) {
	f.count++
	e := f.slots.get(fq)
	if e&qfMeta == 0 { // home slot empty: a new run at home
		f.slots.set(fq, fr<<3|qfOccupied)
		return
	}
	runExists := e&qfOccupied != 0
	if !runExists {
		f.slots.set(fq, e|qfOccupied)
	}
	s := f.runStart(fq)
	pos := s
	var cont uint64
	if runExists {
		// Insert after the last remainder ≤ fr, keeping the run sorted (Q3);
		// equal remainders are interchangeable, so the layout stays
		// canonical (Q4).
		for f.slots.get(pos)>>3 <= fr {
			pos = f.inc(pos)
			if f.slots.get(pos)&qfContinuation == 0 {
				break
			}
		}
		if pos != s {
			cont = qfContinuation
		}
	}
	carry := fr<<3 | cont
	if pos != fq {
		carry |= qfShifted
	}
	// The old head of fq's run, if the new remainder displaces it, now
	// continues the run.
	demoteHead := runExists && pos == s
	for i := pos; ; i = f.inc(i) {
		e := f.slots.get(i)
		f.slots.set(i, carry|e&qfOccupied)
		if e&qfMeta == 0 {
			return
		}
		// Every remainder pushed right is away from home (Q4).
		carry = e&^qfOccupied | qfShifted
		if demoteHead {
			carry |= qfContinuation
			demoteHead = false
		}
	}
}

// Remove deletes one copy of key's fingerprint and reports whether it found
// one. Only remove keys known to be members (see the type doc).
func (f *Quotient) Remove(key []byte) bool { return f.RemoveHash(Hash(key)) }

// RemoveHash is Remove for a key whose Hash the caller holds.
func (f *Quotient) RemoveHash(h uint64) bool {
	fq, fr := f.split(h)
	s, pos, found := f.locate(fq, fr)
	if !found {
		return false
	}
	f.count--
	next := f.inc(pos)
	promoteNext := false
	if pos == s {
		if f.slots.get(next)&qfContinuation == 0 {
			// The run held only this remainder (Q2).
			f.slots.set(fq, f.slots.get(fq)&^qfOccupied)
		} else {
			promoteNext = true // the next remainder becomes the run's head
		}
	}
	// Close the gap: slide the rest of the cluster one slot left until an
	// empty slot or a remainder already at home (Q4). runQ tracks the
	// quotient of the run being moved, to recompute each shifted bit.
	runQ := fq
	i := pos
	for j := next; ; i, j = j, f.inc(j) {
		e := f.slots.get(j)
		if e&qfMeta == 0 || e&qfShifted == 0 {
			break
		}
		if e&qfContinuation == 0 {
			runQ = f.inc(runQ)
			for f.slots.get(runQ)&qfOccupied == 0 {
				runQ = f.inc(runQ)
			}
		}
		moved := e &^ (qfOccupied | qfShifted)
		if promoteNext {
			moved &^= qfContinuation
			promoteNext = false
		}
		if i != runQ {
			moved |= qfShifted
		}
		f.slots.set(i, moved|f.slots.get(i)&qfOccupied)
	}
	f.slots.set(i, f.slots.get(i)&qfOccupied)
	return true
}

// Len returns the number of fingerprints stored (keys added minus keys
// removed).
func (f *Quotient) Len() int { return int(f.count) }

// Cap returns the number of keys the filter takes before Add reports
// ErrFull: floor(2^q · load limit).
func (f *Quotient) Cap() int { return int(f.maxCount) }

// LoadFactor returns Len() / 2^q.
func (f *Quotient) LoadFactor() float64 { return loadOf(f.count, f.slots.n) }

// MaxLoad returns the load limit the filter was built with.
func (f *Quotient) MaxLoad() float64 { return f.maxLoad }

// QuotientBits returns q (the table has 2^q slots).
func (f *Quotient) QuotientBits() int { return int(f.q) }

// RemainderBits returns r, the bits stored per key besides the 3 metadata
// bits.
func (f *Quotient) RemainderBits() int { return int(f.r) }

// Resize doubles the table by moving one fingerprint bit from the remainder
// to the quotient and re-inserting every stored fingerprint; the original
// keys are not needed. Fingerprints keep their q+r bits, so keys added before
// and after a resize are treated alike and none becomes absent (F1).
//
// The cost is precision: remainders lose a bit. At the same number of keys
// the false-positive rate is unchanged (the load halves as r drops by one:
// α/2^r = (α/2)/2^(r-1)), but refilled to the load limit the rate doubles;
// k resizes multiply the full-load rate by 2^k. Resize fails with ErrFull
// when r is already 1 or q would pass its limit.
func (f *Quotient) Resize() error {
	if f.r <= 1 || f.q >= quotientMaxQ {
		return fmt.Errorf("filters: quotient: cannot resize q=%d r=%d: %w", f.q, f.r, ErrFull)
	}
	g := newQuotientShape(f.q+1, f.r-1, f.maxLoad)
	err := f.scan(func(fq, fr uint64) {
		fp := fq<<f.r | fr
		g.insert(fp>>g.r, fp&g.remMask)
	})
	if err != nil { // unreachable for a filter built by this package (Q1-Q4)
		return err
	}
	*f = *g
	return nil
}

// scan visits every stored fingerprint in table order, starting after an
// empty slot, and checks invariants Q1-Q4 on the way. It is the decoder's
// validation and Resize's iteration.
func (f *Quotient) scan(visit func(fq, fr uint64)) error {
	size := f.slots.n
	start := size
	for i := uint64(0); i < size; i++ {
		if f.slots.get(i)&qfMeta == 0 {
			start = i
			break
		}
	}
	if start == size {
		return corruptf("quotient: no empty slot")
	}
	// pending holds the quotients whose occupied bit has been seen in the
	// current cluster but whose run has not started yet (Q3 pairs runs with
	// occupied quotients in order).
	pending, head := f.pending[:0], 0
	var runQ, lastRem uint64
	inRun := false
	n := uint64(0)
	for k := uint64(1); k <= size; k++ {
		i := (start + k) & f.mask
		e := f.slots.get(i)
		if e&qfOccupied != 0 {
			pending = append(pending, i)
		}
		if e&qfMeta == 0 {
			if head != len(pending) {
				return corruptf("quotient: slot %d occupied but has no run", pending[head])
			}
			if e != 0 {
				return corruptf("quotient: empty slot %d holds a remainder", i)
			}
			pending, head, inRun = pending[:0], 0, false
			continue
		}
		rem := e >> 3
		if e&qfContinuation == 0 {
			if head == len(pending) {
				return corruptf("quotient: run at slot %d has no occupied quotient", i)
			}
			runQ, head, inRun = pending[head], head+1, true
		} else {
			if !inRun {
				return corruptf("quotient: slot %d continues a run that does not exist", i)
			}
			if rem < lastRem {
				return corruptf("quotient: run of quotient %d unsorted at slot %d", runQ, i)
			}
		}
		lastRem = rem
		if (e&qfShifted != 0) != (i != runQ) {
			return corruptf("quotient: slot %d has a wrong shifted bit", i)
		}
		n++
		if visit != nil {
			visit(runQ, rem)
		}
	}
	f.pending = pending[:0]
	if n != f.count {
		return corruptf("quotient: header counts %d keys, table holds %d", f.count, n)
	}
	return nil
}

// MarshalBinary encodes the filter (docs/format.md, "Quotient filter").
func (f *Quotient) MarshalBinary() ([]byte, error) {
	if f.q == 0 {
		return nil, invalidf("filters: Quotient.MarshalBinary: zero-value filter")
	}
	w := newDynBody(28+8*len(f.slots.words), uint8(f.q), uint8(f.r))
	w.f64(f.maxLoad)
	w.u64(f.count)
	w.u64(uint64(len(f.slots.words)))
	w.u64s(f.slots.words)
	return quotientCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces f with the filter encoded in data. On error f is
// unchanged.
func (f *Quotient) UnmarshalBinary(data []byte) error {
	return quotientCodec.unmarshal(f, data)
}

var quotientCodec = newDynCodec(TypeQuotient, quotientVersion, "quotient", 2, decodeQuotient)

// decodeQuotient checks the parameters, that no bit outside the table is
// set, and invariants Q1-Q4 over the whole table, so that a decoded filter
// is exactly one that Add and Remove could have built: no query or update on
// it can loop or panic (F3).
func decodeQuotient(h dynHeader, r *bodyReader) (*Quotient, error) {
	q, rb := uint(h[0]), uint(h[1])
	maxLoad := r.f64("load limit")
	count := r.u64("count")
	nWords := r.u64("word count")
	r.check(q >= 1 && q <= quotientMaxQ, "quotient: q = %d outside [1, %d]", q, quotientMaxQ)
	r.check(rb >= 1 && rb <= quotientMaxR && q+rb <= 64, "quotient: r = %d invalid for q = %d", rb, q)
	r.check(maxLoad > 0 && maxLoad <= QuotientMaxLoad, "quotient: load limit %v outside (0, %v]", maxLoad, QuotientMaxLoad)
	if r.fail != nil {
		return nil, fmt.Errorf("filters: %w", r.fail)
	}
	words, err := readDynWords(r, "quotient", nWords, packedWords(1<<q, rb+3))
	if err != nil {
		return nil, err
	}
	f := newQuotientShape(q, rb, maxLoad)
	if count > f.maxCount {
		return nil, corruptf("quotient: %d keys exceed the load limit's %d", count, f.maxCount)
	}
	copy(f.slots.words, words)
	if k := f.slots.dirtyWord(words); k >= 0 {
		return nil, corruptf("quotient: bits set past the end of the table (word %d)", k)
	}
	f.count = count
	if err := f.scan(nil); err != nil {
		return nil, err
	}
	return f, nil
}

// Compile-time check that Quotient is a Filter.
var _ Filter = (*Quotient)(nil)
