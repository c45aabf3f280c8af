package filters

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// CountingQuotient is a counting quotient filter (Pandey, Bender, Johnson
// and Patro, "A General-Purpose Counting Filter: Making Every Bit Count",
// SIGMOD 2017). Like Quotient it stores each key's r-bit remainder in a run
// of slots for the key's quotient, runs sorted and packed left, but:
//
//   - the metadata is rank-and-select: per block of 64 slots one occupieds
//     word (bit q: quotient q has a run), one runends word (bit s: slot s
//     ends a run) and an offset byte, 2.125 bits a slot instead of 3, and a
//     run is found with one popcount and one select instead of a walk over
//     the cluster;
//   - a key added c times is one counter group in its run, O(log c) slots,
//     and Count returns c (a multiset, exact for keys whose fingerprint no
//     other key shares);
//   - the table has no wrap-around: runs that spill past the last home slot
//     go into overflow blocks at the end, so the quotient range (any
//     multiple of 64, not a power of two) is sized to n.
//
// Counter groups in a run (ascending remainder x, each x at most once):
//
//	count 1        x
//	count 2        x x
//	count c ≥ 3    x D x          when x > 0
//	count c ≥ 3    0 0 0 D 0      when x = 0
//
// D holds c−3 in base 2^r−1, most significant digit first, at least one
// digit; digit d is stored as d if d < x, else d+1, so no digit slot equals
// x (and for x = 0 none is 0). When x > 0 and the first digit slot is above
// x, a zero digit is put in front, so a group's second slot is below x
// exactly when the group is a counter: a reader tells the cases apart from
// the first two or three slots, since the next group's remainder is above x.
// This follows the paper's §4 scheme; the x = 0 form (three zeros, then
// nonzero digits) is ours, chosen so no later group's digits are needed to
// end a zero's counter.
//
// Offsets (the paper's O_i, §3): let E(j) be the last slot of the run of the
// largest occupied quotient ≤ j. The offset of block i is E(64i) − 64i when
// that is ≥ 0, else 0, saturated at 255; a saturated offset is recomputed
// from the block before (rare: it takes a cluster over 255 slots long).
// The runend of quotient q > 64i in block i is then the d-th runend after
// slot 64i + offset, where d counts the occupied quotients in (64i, q].
//
// Invariants (kept by Add and Remove; checked by the decoder):
//
//	CQ1 the k-th occupied quotient and the k-th runend pair up: run k spans
//	   [max(q_k, end_{k−1}+1), end_k] with end_k ≥ q_k; no quotient in the
//	   overflow blocks is occupied;
//	CQ2 every run is a sequence of canonical counter groups with strictly
//	   ascending remainders, and slots outside runs hold 0;
//	CQ3 every offset byte is min(255, true offset);
//	CQ4 the header's slot count and key count match the table, and the slot
//	   count is within the load limit.
//
// Remove must only be called for keys known to be members (package doc). A
// CountingQuotient is not safe for concurrent mutation.
//
// The zero value (a CountingQuotient no constructor or UnmarshalBinary made) is an
// empty filter with no slots: queries answer "absent" (Count 0), Remove finds nothing,
// Len and LoadFactor are 0, Add returns an error wrapping ErrFull (it has
// nowhere to put a key) and MarshalBinary one wrapping ErrInvalidArgument
// (it has no encoding). A declared-but-unmade filter thus fails loudly on
// its first Add instead of indexing an empty table.
type CountingQuotient struct {
	data     []byte // nblocks blocks of stride bytes, then 8 zero bytes
	r        uint   // remainder bits
	remMask  uint64
	stride   uint64 // 17 + 8r bytes: offset, occupieds, runends, remainders
	nq       uint64 // home slots (quotients): 64 · homeBlocks
	home     uint32 // home blocks
	overflow uint32 // overflow blocks after them
	nblocks  uint64
	nslots   uint64
	used     uint64 // slots in use
	maxUsed  uint64 // floor(nq · CountingQuotientMaxLoad)
	total    uint64 // keys: the sum of all counts
	enc      []uint64
	empties  []uint64
}

const (
	// CountingQuotientMaxLoad is the slot load Add will not pass. Pandey et
	// al. run the CQF to 95% (§6); rank-and-select metadata keeps lookups
	// cheap there because a query skips the cluster walk.
	CountingQuotientMaxLoad = 0.95
	// cqfMinR: counter digits are base 2^r−1, unary (not O(log c)) at r = 1.
	cqfMinR = 2
	// cqfMaxR keeps the remainder in the key hash's low 32 bits, disjoint
	// from the 32 bits that pick the quotient.
	cqfMaxR = 32
	// cqfMaxHomeBlocks keeps quotients below 2^32 (reduce32).
	cqfMaxHomeBlocks = 1 << 26
	// cqfHeader is the per-block header: offset byte, occupieds, runends.
	cqfHeader = 17
	// cqfOffsetMax is the saturated offset value (see the type doc).
	cqfOffsetMax = 255
	// countingQuotientVersion is the body format version: 1 is the first
	// (and only) layout, described in docs/format.md, "Counting quotient
	// filter (type 12)".
	countingQuotientVersion = 1
)

var (
	errCountingQuotientFull = fmt.Errorf("filters: counting quotient: load limit or overflow blocks reached: %w", ErrFull)
	errCountingQuotientMax  = fmt.Errorf("filters: counting quotient: count would pass 2^64-1: %w", ErrFull)
)

// cqfOverflowBlocks sizes the overflow area after home blocks: 4·sqrt(slots)
// slots, at least one block. The CQF reference implementation reserves
// 10·sqrt; the last cluster at 95% load is a few hundred slots on average
// (expected cluster length ~1/(1−α)²), so 4·sqrt (4096 slots at 2^20) rarely
// binds, and when it does Add reports ErrFull rather than losing anything.
func cqfOverflowBlocks(home uint64) uint64 {
	return max(1, uint64(math.Ceil(4*math.Sqrt(float64(64*home))/64)))
}

// NewCountingQuotient returns an empty counting quotient filter for n
// distinct keys at false-positive rate fpRate: ceil(n / (0.95·64)) blocks
// of 64 home slots plus overflow blocks, remainders of r = ceil(log2(0.95 /
// fpRate)) bits (at least 2). An absent key is a false positive iff its
// run holds its remainder: at slot load α at most α/2^r ≤ fpRate.
// Repeated keys take O(log count) slots: a key added c times takes at most
// c slots, except that one with remainder 0 added 3 or 4 times takes 5 (the
// "0 0 0 D 0" group). A multiset of n adds that repeats keys 3 or 4 times
// may therefore not fit: at r = 4, 1,000 adds of keys three times each met
// ErrFull after 993.
func NewCountingQuotient(n int, fpRate float64) (*CountingQuotient, error) {
	if err := checkSizing(n, fpRate); err != nil {
		return nil, err
	}
	r := uint(cqfMinR)
	if need := math.Ceil(math.Log2(CountingQuotientMaxLoad / fpRate)); need > cqfMinR {
		r = uint(need)
	}
	if r > cqfMaxR {
		return nil, invalidf("counting quotient: rate %v needs %d-bit remainders; at most %d", fpRate, r, cqfMaxR)
	}
	home := math.Ceil(float64(n) / (64 * CountingQuotientMaxLoad))
	if home > cqfMaxHomeBlocks {
		return nil, invalidf("counting quotient: n = %d needs more than 2^26 blocks", n)
	}
	return newCountingQuotientShape(r, uint32(home), uint32(cqfOverflowBlocks(uint64(home)))), nil
}

func newCountingQuotientShape(r uint, home, overflow uint32) *CountingQuotient {
	f := &CountingQuotient{
		r:        r,
		remMask:  1<<r - 1,
		stride:   cqfHeader + 8*uint64(r),
		nq:       64 * uint64(home),
		home:     home,
		overflow: overflow,
		nblocks:  uint64(home) + uint64(overflow),
	}
	f.nslots = 64 * f.nblocks
	f.maxUsed = uint64(math.Floor(float64(f.nq) * CountingQuotientMaxLoad))
	f.data = make([]byte, f.nblocks*f.stride+8)
	return f
}

// ---- block fields --------------------------------------------------------

func (f *CountingQuotient) offByte(i uint64) uint64 { return uint64(f.data[i*f.stride]) }
func (f *CountingQuotient) occ(i uint64) uint64 {
	return binary.LittleEndian.Uint64(f.data[i*f.stride+1:])
}
func (f *CountingQuotient) ends(i uint64) uint64 {
	return binary.LittleEndian.Uint64(f.data[i*f.stride+9:])
}
func (f *CountingQuotient) setOcc(i, w uint64) {
	binary.LittleEndian.PutUint64(f.data[i*f.stride+1:], w)
}
func (f *CountingQuotient) setEnds(i, w uint64) {
	binary.LittleEndian.PutUint64(f.data[i*f.stride+9:], w)
}

func (f *CountingQuotient) isOcc(q uint64) bool { return f.occ(q>>6)>>(q&63)&1 != 0 }
func (f *CountingQuotient) isEnd(s uint64) bool { return f.ends(s>>6)>>(s&63)&1 != 0 }
func (f *CountingQuotient) setEnd(s uint64, on bool) {
	w := f.ends(s>>6) &^ (1 << (s & 63))
	if on {
		w |= 1 << (s & 63)
	}
	f.setEnds(s>>6, w)
}

// rem reads slot s's remainder with one 8-byte load: r ≤ 32, so the r bits
// at any bit offset fit; the table's 8 trailing bytes keep the load in
// bounds for the last block.
func (f *CountingQuotient) rem(s uint64) uint64 {
	bit := (s & 63) * uint64(f.r)
	p := (s>>6)*f.stride + cqfHeader + bit>>3
	return binary.LittleEndian.Uint64(f.data[p:]) >> (bit & 7) & f.remMask
}

func (f *CountingQuotient) setRem(s, v uint64) {
	bit := (s & 63) * uint64(f.r)
	p := (s>>6)*f.stride + cqfHeader + bit>>3
	w := binary.LittleEndian.Uint64(f.data[p:])
	sh := bit & 7
	binary.LittleEndian.PutUint64(f.data[p:], w&^(f.remMask<<sh)|(v&f.remMask)<<sh)
}

// ---- rank and select -----------------------------------------------------

// selectEndAfter returns the slot of the d-th (d ≥ 1) runend strictly after
// slot p (p ≥ −1), or nslots if there is none (only in a table the decoder
// would reject).
func (f *CountingQuotient) selectEndAfter(p int64, d uint64) uint64 {
	s := uint64(p + 1)
	if s >= f.nslots {
		return f.nslots
	}
	i := s >> 6
	w := f.ends(i) &^ lowMask(uint(s&63))
	for {
		if pc := uint64(bits.OnesCount64(w)); d <= pc {
			return i<<6 + uint64(select64(w, uint(d-1)))
		} else {
			d -= pc
		}
		i++
		if i >= f.nblocks {
			return f.nslots
		}
		w = f.ends(i)
	}
}

// endFrom returns E(64i) given prev = E(64(i−1)), either value −1 when it
// lies before its block's first slot (see the type doc).
func (f *CountingQuotient) endFrom(i uint64, prev int64) int64 {
	var e int64
	if i == 0 {
		if f.occ(0)&1 == 0 {
			return -1
		}
		e = int64(f.selectEndAfter(-1, 1))
	} else {
		d := uint64(bits.OnesCount64(f.occ(i-1)&^1)) + f.occ(i)&1
		if d == 0 {
			e = prev
		} else {
			base := max(prev, int64(64*(i-1)))
			e = int64(f.selectEndAfter(base, d))
		}
	}
	if e < int64(64*i) {
		return -1
	}
	return e
}

// blockEnd returns E(64i), or −1 when it lies before slot 64i. An offset
// of 0 is disambiguated by the runend bit of slot 64i: a runend there can
// only end the last run of a quotient ≤ 64i.
func (f *CountingQuotient) blockEnd(i uint64) int64 {
	o := f.offByte(i)
	switch {
	case o == cqfOffsetMax:
		if i == 0 {
			return f.endFrom(0, -1)
		}
		return f.endFrom(i, f.blockEnd(i-1))
	case o > 0:
		return int64(64*i + o)
	case f.isEnd(64 * i):
		return int64(64 * i)
	}
	return -1
}

// runEnd returns E(q): the last slot of the run of the largest occupied
// quotient ≤ q, or −1 if that run ends before q's block or there is none.
// For an occupied q it is the end of q's own run.
func (f *CountingQuotient) runEnd(q uint64) int64 {
	i := q >> 6
	d := uint64(bits.OnesCount64(f.occ(i) & lowMask(uint(q&63)+1) &^ 1))
	e0 := f.blockEnd(i)
	if d == 0 {
		return e0
	}
	return int64(f.selectEndAfter(max(e0, int64(64*i)), d))
}

// runStart returns the first slot of occupied quotient q's run, which ends
// at end: just after the previous run's end if that is at or past q, else q.
func (f *CountingQuotient) runStart(q, end uint64) uint64 {
	if end == q {
		return q
	}
	hi := end - 1
	i := hi >> 6
	w := f.ends(i) & lowMask(uint(hi&63)+1)
	for {
		if i == q>>6 {
			w &^= lowMask(uint(q & 63))
		}
		if w != 0 {
			return i<<6 + uint64(bits.Len64(w))
		}
		if i == q>>6 {
			return q
		}
		i--
		w = f.ends(i)
	}
}

// findEmpty returns the first unused slot at or after x, or nslots: slot x
// is unused iff no run of a quotient ≤ x reaches it (E(x) < x).
func (f *CountingQuotient) findEmpty(x uint64) uint64 {
	for x < f.nslots {
		e := f.runEnd(x)
		if e < int64(x) {
			return x
		}
		x = uint64(e) + 1
	}
	return f.nslots
}

// nextOcc returns the lowest occupied quotient in [from, to], or false.
func (f *CountingQuotient) nextOcc(from, to uint64) (uint64, bool) {
	if from > to || from >= f.nq {
		return 0, false
	}
	i := from >> 6
	w := f.occ(i) &^ lowMask(uint(from&63))
	for {
		if w != 0 {
			q := i<<6 + uint64(bits.TrailingZeros64(w))
			return q, q <= to
		}
		i++
		if i<<6 > to || i >= f.nblocks {
			return 0, false
		}
		w = f.occ(i)
	}
}

// updateOffsets recomputes the offsets of blocks whose first slot lies in
// [lo, hi], in order, each from the one before (keeps CQ3). Only those can
// change when the slots in [lo, hi] moved and lo is the quotient operated
// on: runs of smaller quotients end before lo, and past hi nothing moved.
func (f *CountingQuotient) updateOffsets(lo, hi uint64) {
	i := (lo + 63) >> 6
	if i >= f.nblocks || i<<6 > hi {
		return
	}
	prev := int64(-1)
	if i > 0 {
		prev = f.blockEnd(i - 1)
	}
	for ; i < f.nblocks && i<<6 <= hi; i++ {
		e := f.endFrom(i, prev)
		o := uint64(0)
		if e >= 0 {
			o = min(uint64(e)-64*i, cqfOffsetMax)
		}
		f.data[i*f.stride] = byte(o)
		prev = e
	}
}

// ---- counter groups ------------------------------------------------------

// groupAt decodes the counter group starting at pos in a run ending at end:
// its length in slots and its count. ok is false for a group that is not
// canonical (CQ2) or whose count overflows; only the decoder sees those.
func (f *CountingQuotient) groupAt(pos, end uint64) (length, count uint64, ok bool) {
	x := f.rem(pos)
	if pos == end {
		return 1, 1, true
	}
	y := f.rem(pos + 1)
	var first uint64 // first digit slot
	switch {
	case x == 0 && y != 0, x > 0 && y > x:
		return 1, 1, true
	case y == x && (x != 0 || pos+1 == end || f.rem(pos+2) != 0):
		return 2, 2, true
	case x == 0: // 0 0 0 D 0
		first = pos + 3
	default: // x D x
		first = pos + 1
	}
	t := first
	for t <= end && f.rem(t) != x {
		t++
	}
	if t > end || t == first {
		return 0, 0, false
	}
	base := f.remMask // 2^r − 1
	var v uint64
	for s := first; s < t; s++ {
		d := f.rem(s)
		if d > x {
			d--
		}
		hi, lo := bits.Mul64(v, base)
		var carry uint64
		v, carry = bits.Add64(lo, d, 0)
		if hi != 0 || carry != 0 {
			return 0, 0, false
		}
	}
	c, carry := bits.Add64(v, 3, 0)
	if carry != 0 {
		return 0, 0, false
	}
	length = t - pos + 1
	if length != f.encLen(x, c) { // canonical form only (see encLen)
		return 0, 0, false
	}
	return length, c, true
}

// encLen is len(encode(x, c)) without building it, so queries write
// nothing (read-only filters may be queried concurrently). For a given
// count, digit strings of equal length are equal, so a group of canonical
// length is the canonical group.
func (f *CountingQuotient) encLen(x, c uint64) uint64 {
	if c <= 2 {
		return c
	}
	base := f.remMask
	n, msd := uint64(1), c-3
	for msd >= base {
		msd /= base
		n++
	}
	if x == 0 {
		return n + 4
	}
	if msd >= x { // its slot is msd+1 > x: a zero digit goes in front
		n++
	}
	return n + 2
}

// encode returns the canonical slots of remainder x with count c ≥ 1 in
// f.enc (see the type doc).
func (f *CountingQuotient) encode(x, c uint64) []uint64 {
	out := f.enc[:0]
	switch c {
	case 1:
		out = append(out, x)
	case 2:
		out = append(out, x, x)
	default:
		var digits [64]uint64
		n := 0
		base := f.remMask
		for v := c - 3; ; v /= base {
			d := v % base
			if d >= x {
				d++ // skip the slot value x
			}
			digits[n] = d
			n++
			if v < base {
				break
			}
		}
		if x == 0 {
			out = append(out, 0, 0, 0)
		} else {
			out = append(out, x)
			if digits[n-1] > x {
				out = append(out, 0)
			}
		}
		for k := n - 1; k >= 0; k-- {
			out = append(out, digits[k])
		}
		out = append(out, x)
	}
	f.enc = out
	return out
}

// findGroup looks for remainder x in the run [start, end]: it returns the
// group's first slot, length and count, or (insertion slot, 0, 0).
func (f *CountingQuotient) findGroup(start, end, x uint64) (pos, length, count uint64) {
	pos = start
	for pos <= end {
		gx := f.rem(pos)
		if gx > x {
			return pos, 0, 0
		}
		l, c, _ := f.groupAt(pos, end)
		if gx == x {
			return pos, l, c
		}
		if l == 0 { // impossible in a valid table; keeps the loop finite
			l = 1
		}
		pos += l
	}
	return pos, 0, 0
}

// ---- operations ----------------------------------------------------------

// split maps a key hash to its quotient (high 32 bits, reduced onto the
// home slots) and remainder (low r bits).
func (f *CountingQuotient) split(h uint64) (q, x uint64) {
	return (h >> 32) * f.nq >> 32, h & f.remMask
}

// MayContain reports whether key may have been added.
func (f *CountingQuotient) MayContain(key []byte) bool { return f.CountHash(Hash(key)) > 0 }

// MayContainHash is MayContain for a key whose Hash the caller holds.
func (f *CountingQuotient) MayContainHash(h uint64) bool { return f.CountHash(h) > 0 }

// Count returns how many times key was added (minus removed). It is never
// below the true count; it is above it only when another stored key has
// the same fingerprint, which for an absent key is a false positive.
func (f *CountingQuotient) Count(key []byte) uint64 { return f.CountHash(Hash(key)) }

// CountHash is Count for a key whose Hash the caller holds.
func (f *CountingQuotient) CountHash(h uint64) uint64 {
	if f.nq == 0 {
		return 0 // zero value: an empty filter (see the type doc)
	}
	q, x := f.split(h)
	if !f.isOcc(q) {
		return 0
	}
	end := uint64(f.runEnd(q))
	start := f.runStart(q, end)
	_, _, c := f.findGroup(start, end, x)
	return c
}

// Add inserts one copy of key. If the slot load limit would be passed or
// no free slot is left before the end of the overflow blocks, it returns an
// error wrapping ErrFull and changes nothing (every check precedes the
// first write).
func (f *CountingQuotient) Add(key []byte) error { return f.AddHash(Hash(key)) }

// AddHash is Add for a key whose Hash the caller holds.
func (f *CountingQuotient) AddHash(h uint64) error {
	if f.nq == 0 {
		return errZeroValueFull
	}
	if f.total == math.MaxUint64 {
		return errCountingQuotientMax
	}
	q, x := f.split(h)
	occupied := f.isOcc(q)
	var gs, oldLen, c, end uint64
	if occupied {
		end = uint64(f.runEnd(q))
		gs, oldLen, c = f.findGroup(f.runStart(q, end), end, x)
		if c == math.MaxUint64 {
			return errCountingQuotientMax
		}
	} else {
		gs = q
		if e := f.runEnd(q); e >= int64(q) {
			gs = uint64(e) + 1
		}
	}
	enc := f.encode(x, c+1)
	delta := uint64(len(enc)) - oldLen
	if f.used+delta > f.maxUsed {
		return errCountingQuotientFull
	}
	p := gs + oldLen // new slots go here, pushing the rest of the cluster
	f.empties = f.empties[:0]
	for k, e := uint64(0), p; k < delta; k, e = k+1, e+1 {
		e = f.findEmpty(e)
		if e >= f.nslots {
			return errCountingQuotientFull
		}
		f.empties = append(f.empties, e)
	}
	for _, e := range f.empties {
		f.shiftRight(p, e)
	}
	for k, v := range enc {
		f.setRem(gs+uint64(k), v)
	}
	switch {
	case !occupied:
		f.setOcc(q>>6, f.occ(q>>6)|1<<(q&63))
		f.setEnd(gs, true)
	case p == end+1 && delta > 0: // the group ends the run: move the runend
		f.setEnd(end, false)
		f.setEnd(end+delta, true)
	}
	if delta > 0 {
		f.updateOffsets(q, f.empties[len(f.empties)-1])
	}
	f.used += delta
	f.total++
	return nil
}

// shiftRight moves slots [p, e) (remainders and runend bits) one slot
// right into the unused slot e, leaving slot p zero.
func (f *CountingQuotient) shiftRight(p, e uint64) {
	for s := e; s > p; s-- {
		f.setRem(s, f.rem(s-1))
		f.setEnd(s, f.isEnd(s-1))
	}
	f.setRem(p, 0)
	f.setEnd(p, false)
}

// Remove deletes one copy of key and reports whether its fingerprint was
// found. Only remove keys known to be members (see the type doc).
func (f *CountingQuotient) Remove(key []byte) bool { return f.RemoveHash(Hash(key)) }

// RemoveHash is Remove for a key whose Hash the caller holds.
func (f *CountingQuotient) RemoveHash(h uint64) bool {
	if f.nq == 0 {
		return false
	}
	q, x := f.split(h)
	if !f.isOcc(q) {
		return false
	}
	end := uint64(f.runEnd(q))
	start := f.runStart(q, end)
	gs, oldLen, c := f.findGroup(start, end, x)
	if oldLen == 0 {
		return false
	}
	var enc []uint64
	if c > 1 {
		enc = f.encode(x, c-1)
	}
	for k, v := range enc {
		f.setRem(gs+uint64(k), v)
	}
	p := gs + uint64(len(enc))
	delta := oldLen - uint64(len(enc))
	last := p
	for k := uint64(0); k < delta; k++ {
		last = max(last, f.deleteSlot(q, start, p, end))
		end--
	}
	if delta > 0 {
		f.updateOffsets(q, last)
	}
	f.used -= delta
	f.total--
	return true
}

// deleteSlot removes slot p from the run of q spanning [start, end] and
// closes the gap: the rest of the run moves left, then each following run
// of the cluster that sits right of its home (its quotient ≤ the previous
// run's end) moves left too. Returns the slot that became unused.
func (f *CountingQuotient) deleteSlot(q, start, p, end uint64) uint64 {
	wasEnd := p == end
	emptied := start == end
	last, cq := end, q
	for {
		nq, ok := f.nextOcc(cq+1, last)
		if !ok {
			break
		}
		last = f.selectEndAfter(int64(last), 1)
		cq = nq
	}
	for s := p; s < last; s++ {
		f.setRem(s, f.rem(s+1))
		f.setEnd(s, f.isEnd(s+1))
	}
	f.setRem(last, 0)
	f.setEnd(last, false)
	if emptied {
		f.setOcc(q>>6, f.occ(q>>6)&^(1<<(q&63)))
	} else if wasEnd {
		f.setEnd(p-1, true)
	}
	return last
}

// Len returns the number of keys stored: adds minus removes, counting
// repeats.
func (f *CountingQuotient) Len() int { return int(f.total) }

// Slots returns the number of slots in use (distinct fingerprints and
// counter digits).
func (f *CountingQuotient) Slots() int { return int(f.used) }

// LoadFactor returns the slot load: Slots() over the home slots. Add
// refuses to pass 0.95.
func (f *CountingQuotient) LoadFactor() float64 { return loadOf(f.used, f.nq) }

// RemainderBits returns r.
func (f *CountingQuotient) RemainderBits() int { return int(f.r) }

// SizeBits returns the memory of the table in bits, overflow blocks
// included.
func (f *CountingQuotient) SizeBits() uint64 { return f.nblocks * f.stride * 8 }

// MarshalBinary encodes the filter (docs/format.md, "Counting quotient
// filter").
func (f *CountingQuotient) MarshalBinary() ([]byte, error) {
	if f.r == 0 {
		return nil, invalidf("filters: CountingQuotient.MarshalBinary: zero-value filter")
	}
	w := newDynBody(28+len(f.data), uint8(f.r))
	w.u32(f.home)
	w.u32(f.overflow)
	w.u64(f.used)
	w.u64(f.total)
	w.bytes(f.data[:f.nblocks*f.stride])
	return countingQuotientCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces f with the filter encoded in data. On error f is
// unchanged.
func (f *CountingQuotient) UnmarshalBinary(data []byte) error {
	return countingQuotientCodec.unmarshal(f, data)
}

var countingQuotientCodec = newDynCodec(TypeCountingQuotient, countingQuotientVersion, "counting quotient", 1, decodeCountingQuotient)

// decodeCountingQuotient checks the shape against the body length before
// allocating, then CQ1-CQ4 over the whole table, so a decoded filter is one
// Add and Remove could have built and no later operation can loop, index
// out of range or miscount (F3).
func decodeCountingQuotient(h dynHeader, rd *bodyReader) (*CountingQuotient, error) {
	r := uint(h[0])
	home := rd.u32("home blocks")
	overflow := rd.u32("overflow blocks")
	used := rd.u64("slots used")
	total := rd.u64("key count")
	rd.check(r >= cqfMinR && r <= cqfMaxR, "counting quotient: r = %d outside [%d, %d]", r, cqfMinR, cqfMaxR)
	rd.check(home >= 1 && home <= cqfMaxHomeBlocks, "counting quotient: %d home blocks", home)
	rd.check(uint64(overflow) == cqfOverflowBlocks(uint64(home)), "counting quotient: %d overflow blocks, shape needs %d",
		overflow, cqfOverflowBlocks(uint64(home)))
	if rd.fail != nil {
		return nil, fmt.Errorf("filters: %w", rd.fail)
	}
	raw, err := readDynBytes(rd, "counting quotient", (uint64(home)+uint64(overflow))*(cqfHeader+8*uint64(r)))
	if err != nil {
		return nil, err
	}
	f := newCountingQuotientShape(r, home, overflow)
	if used > f.maxUsed {
		return nil, corruptf("counting quotient: %d slots used exceed the load limit's %d", used, f.maxUsed)
	}
	copy(f.data, raw)
	if err := f.validate(used, total); err != nil {
		return nil, err
	}
	f.used, f.total = used, total
	return f, nil
}

// validate checks CQ1-CQ4 against the header's slot and key counts.
func (f *CountingQuotient) validate(used, total uint64) error {
	// CQ1: pair occupied quotients with runends, in order.
	for i := uint64(f.home); i < f.nblocks; i++ {
		if f.occ(i) != 0 {
			return corruptf("counting quotient: occupied quotient in overflow block %d", i)
		}
	}
	var slots, keys uint64
	prevEnd := int64(-1)
	var q uint64
	for {
		nq, ok := f.nextOcc(q, f.nq-1)
		if !ok {
			break
		}
		q = nq
		start := max(q, uint64(prevEnd+1))
		end := f.selectEndAfter(prevEnd, 1)
		if end >= f.nslots || end < start {
			return corruptf("counting quotient: run of quotient %d has no runend at or after slot %d", q, start)
		}
		// CQ2: canonical groups, ascending remainders; slots before the
		// run (the gap after the previous one) hold 0.
		for s := uint64(prevEnd + 1); s < start; s++ {
			if f.rem(s) != 0 {
				return corruptf("counting quotient: unused slot %d holds a remainder", s)
			}
		}
		last := int64(-1)
		for pos := start; pos <= end; {
			x := f.rem(pos)
			if int64(x) <= last {
				return corruptf("counting quotient: run of quotient %d not ascending at slot %d", q, pos)
			}
			l, c, ok := f.groupAt(pos, end)
			if !ok || pos+l-1 > end {
				return corruptf("counting quotient: bad counter at slot %d", pos)
			}
			var carry uint64
			keys, carry = bits.Add64(keys, c, 0)
			if carry != 0 {
				return corruptf("counting quotient: key count overflows")
			}
			last = int64(x)
			pos += l
		}
		slots += end - start + 1
		prevEnd = int64(end)
		q++
	}
	if e := f.selectEndAfter(prevEnd, 1); e < f.nslots {
		return corruptf("counting quotient: runend at slot %d belongs to no quotient", e)
	}
	for s := uint64(prevEnd + 1); s < f.nslots; s++ {
		if f.rem(s) != 0 {
			return corruptf("counting quotient: unused slot %d holds a remainder", s)
		}
	}
	// CQ3: offsets.
	prev := int64(-1)
	for i := uint64(0); i < f.nblocks; i++ {
		e := f.endFrom(i, prev)
		o := uint64(0)
		if e >= 0 {
			o = min(uint64(e)-64*i, cqfOffsetMax)
		}
		if f.offByte(i) != o {
			return corruptf("counting quotient: block %d offset %d, table implies %d", i, f.offByte(i), o)
		}
		prev = e
	}
	// CQ4.
	if slots != used || keys != total {
		return corruptf("counting quotient: header says %d slots and %d keys, table holds %d and %d", used, total, slots, keys)
	}
	return nil
}

// Compile-time check that CountingQuotient is a Filter.
var _ Filter = (*CountingQuotient)(nil)
