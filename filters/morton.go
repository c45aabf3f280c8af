package filters

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// Morton is a Morton filter (Breslow and Jayasena, "Morton Filters: Faster,
// Space-Efficient Cuckoo Filters via Biasing, Compression, and Decoupled
// Logical Sparsity", VLDB 2018): a cuckoo filter whose buckets are logical.
// The table is an array of 64-byte blocks, one cache line each; a block
// holds 32 logical buckets but only S physical fingerprint slots, shared by
// all its buckets:
//
//	bits 0..63     fullness counter array (FCA): 2 bits per bucket, 0..3
//	bits 64..79    overflow tracking array (OTA): 16 bits
//	bits 80..511   fingerprint storage array (FSA): S = floor(432/w) slots
//	               of w bits, bucket 0's fingerprints first, then bucket 1's
//
// so a bucket's fingerprints start at the sum of the counters before it (a
// masked popcount). Because a bucket can take up to 3 fingerprints while a
// block holds on average S·load/32 < 2 per bucket, a key nearly always fits
// its first (primary) bucket; only when that bucket or its block is full
// does it go to its secondary bucket, and then the OTA bit of the primary
// bucket (bucket index mod 16) is set. A lookup reads the primary bucket and
// reads the secondary only if that OTA bit is set: one cache line for most
// absent keys and for keys in their primary bucket (the paper's biasing).
//
// Secondary buckets: with N = 32·blocks logical buckets (even) and an odd
// offset o(fp) < N, alt(b) = b + o if b is even, b − o if odd (mod N). That
// is an involution for any even N, so the block count need not be a power of
// two (the paper's choice too, §5).
//
// OTA bits are never cleared (a bit may cover keys that are still in their
// secondary bucket); after heavy churn more lookups read two lines. The
// false-positive rate stays bounded by the two-bucket rate.
//
// Remove must only be called for keys known to be members (see the package
// doc). A Morton is not safe for concurrent mutation; a filter that is no
// longer mutated may be queried from many goroutines.
//
// The zero value (a Morton no constructor or UnmarshalBinary made) is an
// empty filter with no slots: queries answer "absent", Remove finds nothing,
// Len, LoadFactor and OverflowFraction are 0, Add returns an error wrapping ErrFull (it has
// nowhere to put a key) and MarshalBinary one wrapping ErrInvalidArgument
// (it has no encoding). A declared-but-unmade filter thus fails loudly on
// its first Add instead of indexing an empty table.
type Morton struct {
	// words holds 8 per block, 64-byte aligned, plus two spare zero words:
	// match reads the two words at an empty bucket's offset, which in a
	// full last block is bit 512, one word past the table.
	words   []uint64
	fpBits  uint   // w
	fpMask  uint64 // 2^w - 1; fingerprints are 0..2^w-1 (counters mark use)
	slots   uint   // S: physical slots per block
	lanesLo uint64 // bit 0 of each of 3 w-bit lanes
	lanesHi uint64 // top bit of each of 3 lanes
	blocks  uint64
	buckets uint64 // 32 · blocks
	count   uint64
	// rng drives the eviction choices; stored and restored as in Cuckoo so
	// the same operations give the same bytes and a failed Add changes
	// nothing (F2).
	rng  uint64
	undo []mortonUndo
}

// mortonUndo is a block's contents before an Add's walk modified it.
type mortonUndo struct {
	block uint64
	old   [8]uint64
}

const (
	mortonBlockWords = 8
	mortonBuckets    = 32 // logical buckets per block
	mortonFSABit     = 80 // first bit of the fingerprint storage array
	mortonFSABits    = 512 - mortonFSABit
	mortonBucketCap  = 3 // a 2-bit counter
	mortonOTABits    = 16
	// mortonMaxLoad is the load the constructor sizes for (fraction of
	// physical slots). Blocks share their slots among 32 buckets and
	// overflow to secondary buckets anywhere in the table, so a table fills
	// almost completely: the first ErrFull came at 0.996-0.999 of the slots
	// (docs/filters.md, "Morton filter"); TestMortonReachesLoad asserts 0.97.
	mortonMaxLoad = 0.97
	// mortonCompared is the expected number of fingerprints an absent-key
	// lookup compares, per unit of mean bucket occupancy S/32, in a table
	// filled to its limit: 1 for the primary bucket plus the fraction of
	// OTA bits set, measured at 0.64-0.77 at the limit
	// (TestMortonFalsePositiveRate asserts it stays below 0.8). The width
	// is the narrowest w with mortonCompared·(S/32) / 2^w ≤ ε.
	mortonCompared = 1.8
	// mortonMinBits is the narrowest fingerprint: at 4 bits a block would
	// have 108 slots but its 32 buckets hold at most 96 fingerprints.
	mortonMinBits  = 5
	mortonMaxKicks = 500
	mortonVersion  = 1
	mortonSeed     = 0x5eed_303f_5eed_303f
	// mortonMaxBuckets keeps bucket indexes within a multiply-shift of the
	// low 32 hash bits (the fingerprint comes from the high bits).
	mortonMaxBuckets = 1 << 32
)

var errMortonFull = fmt.Errorf("filters: morton: no free slot within %d displacements: %w",
	mortonMaxKicks, ErrFull)

// mortonEvenBits has the high bit of every 2-bit counter set.
const mortonEvenBits = 0xaaaa_aaaa_aaaa_aaaa

// mortonShape chooses the fingerprint width: the narrowest w in 5..16 whose
// predicted false-positive rate in a completely full table is at most
// fpRate.
func mortonShape(fpRate float64) (uint, error) {
	for w := uint(mortonMinBits); w <= 16; w++ {
		if mortonPredictedFP(w) <= fpRate {
			return w, nil
		}
	}
	return 0, invalidf("morton: false-positive rate %v needs fingerprints wider than 16 bits", fpRate)
}

// mortonPredictedFP is the sizing model's false-positive rate for width w
// with every slot full.
func mortonPredictedFP(w uint) float64 {
	return mortonCompared * float64(mortonFSABits/w) / mortonBuckets / math.Exp2(float64(w))
}

// NewMorton returns an empty Morton filter for n keys at false-positive rate
// fpRate: the narrowest fingerprint (5..16 bits) whose predicted rate in a
// full table is at most fpRate, and enough blocks for n keys at 97% of their
// slots. Rates needing more than 16 bits (below about 2.2e-5) are refused
// with ErrInvalidArgument.
func NewMorton(n int, fpRate float64) (*Morton, error) {
	if err := checkSizing(n, fpRate); err != nil {
		return nil, err
	}
	w, err := mortonShape(fpRate)
	if err != nil {
		return nil, err
	}
	s := mortonFSABits / w
	nb := math.Ceil(float64(n) / (float64(s) * mortonMaxLoad))
	if nb*mortonBuckets > mortonMaxBuckets {
		return nil, invalidf("morton: n = %d needs more than 2^32 buckets", n)
	}
	return newMortonShape(uint64(nb), w), nil
}

// mortonWords returns a zeroed table of nb blocks (and the two spare words)
// whose first word sits on a
// 64-byte boundary, so that each block is exactly one cache line; the Go
// heap does not move objects, so the alignment holds for the table's life.
func mortonWords(nb uint64) []uint64 {
	n := nb*mortonBlockWords + 2
	buf := make([]uint64, n+mortonBlockWords-1)
	skip := (64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64 / 8
	return buf[skip : skip+uintptr(n) : skip+uintptr(n)]
}

func newMortonShape(nb uint64, w uint) *Morton {
	lo := uint64(1) | 1<<w | 1<<(2*w)
	return &Morton{
		words:   mortonWords(nb),
		fpBits:  w,
		fpMask:  1<<w - 1,
		slots:   mortonFSABits / w,
		lanesLo: lo,
		lanesHi: lo << (w - 1),
		blocks:  nb,
		buckets: nb * mortonBuckets,
		rng:     mortonSeed,
	}
}

// derive takes the fingerprint from the top w hash bits and the primary
// bucket from the low 32 by multiply-shift.
func (m *Morton) derive(h uint64) (fp, b uint64) {
	return h >> (64 - m.fpBits), uint64(uint32(h)) * m.buckets >> 32
}

// alt is the involution b ± o(fp) mod N with o odd, + for even b.
func (m *Morton) alt(b, fp uint64) uint64 {
	o := 2*((fp+1)*0x9e3779b97f4a7c15>>32*(m.buckets/2)>>32) + 1
	if b&1 == 0 {
		b += o
		if b >= m.buckets {
			b -= m.buckets
		}
		return b
	}
	if b < o {
		b += m.buckets
	}
	return b - o
}

// offset returns where bucket j's fingerprints start in the FSA (slot
// index) and how many there are, from the counter word.
func mortonOffset(fca uint64, j uint64) (off, cnt uint64) {
	below := fca & (1<<(2*j) - 1)
	off = uint64(bits.OnesCount64(below) + bits.OnesCount64(below&mortonEvenBits))
	return off, fca >> (2 * j) & 3
}

// mortonTotal is the number of occupied slots in a block.
func mortonTotal(fca uint64) uint64 {
	return uint64(bits.OnesCount64(fca) + bits.OnesCount64(fca&mortonEvenBits))
}

// matchBits is nonzero iff bucket b holds fp: the bucket's up to 3 slots are
// read as one 64-bit window and compared in all lanes at once (the SWAR
// zero-lane test of Cuckoo.matchLanes), lanes past the bucket's count
// masked off.
func (m *Morton) matchBits(b, fp uint64) uint64 {
	base := b / mortonBuckets * mortonBlockWords
	off, cnt := mortonOffset(m.words[base], b%mortonBuckets)
	bit := mortonFSABit + off*uint64(m.fpBits)
	w, o := base+bit>>6, bit&63
	x := m.words[w]>>o | m.words[w+1]<<(64-o)
	x ^= fp * m.lanesLo
	hits := (x - m.lanesLo) &^ x & m.lanesHi
	// Keep the flags of the first cnt lanes: a flag is exact in the lowest
	// zero lane and can only be spurious above one, so masking the high
	// lanes never hides a true match nor admits a false one.
	return hits & (1<<(cnt*uint64(m.fpBits)) - 1)
}

// MayContain reports whether key may have been added.
func (m *Morton) MayContain(key []byte) bool { return m.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash the caller holds. The
// secondary bucket is read only when the primary's OTA bit is set. (Reading
// both unconditionally, as Cuckoo does, to avoid mispredicting the OTA
// branch, measured 1.4-1.6x our cuckoo's absent-key time at 92% load, vs
// 1.3x for the branch.) The primary
// bucket's match is matchBits written out, because matchBits is too large
// for the compiler to inline and most lookups end there.
func (m *Morton) MayContainHash(h uint64) bool {
	if m.blocks == 0 {
		return false // zero value: an empty filter (see the type doc)
	}
	fp, b := m.derive(h)
	base := b / mortonBuckets * mortonBlockWords
	off, cnt := mortonOffset(m.words[base], b%mortonBuckets)
	bit := mortonFSABit + off*uint64(m.fpBits)
	w, o := base+bit>>6, bit&63
	x := (m.words[w]>>o | m.words[w+1]<<(64-o)) ^ fp*m.lanesLo
	if (x-m.lanesLo)&^x&m.lanesHi&(1<<(cnt*uint64(m.fpBits))-1) != 0 {
		return true
	}
	if m.words[base+1]>>(b%mortonOTABits)&1 == 0 {
		return false // never overflowed: the key can only be in b
	}
	return m.matchBits(m.alt(b, fp), fp) != 0
}

// block returns block i's eight words.
func (m *Morton) block(i uint64) *[8]uint64 {
	return (*[8]uint64)(m.words[i*mortonBlockWords : i*mortonBlockWords+mortonBlockWords])
}

// canPlace reports whether bucket b has counter room and its block a free
// slot.
func (m *Morton) canPlace(b uint64) bool {
	fca := m.words[b/mortonBuckets*mortonBlockWords]
	return fca>>(2*(b%mortonBuckets))&3 < mortonBucketCap && mortonTotal(fca) < uint64(m.slots)
}

// put appends fp to bucket j of blk; the caller has checked canPlace. The
// FSA bits from the insertion point up move w bits higher; the top w bits
// are free because the block is not full.
func (m *Morton) put(blk *[8]uint64, j, fp uint64) {
	off, cnt := mortonOffset(blk[0], j)
	mortonInsertBits(blk, uint(mortonFSABit+(off+cnt)*uint64(m.fpBits)), m.fpBits, fp)
	blk[0] += 1 << (2 * j)
}

// take removes slot t (a slot of bucket j) from blk and returns its
// fingerprint; the FSA above it moves down w bits.
func (m *Morton) take(blk *[8]uint64, j, t uint64) uint64 {
	pos := uint(mortonFSABit + t*uint64(m.fpBits))
	fp := mortonGetBits(blk, pos, m.fpBits)
	mortonRemoveBits(blk, pos, m.fpBits)
	blk[0] -= 1 << (2 * j)
	return fp
}

// mortonGetBits reads w bits at bit position pos of a block.
func mortonGetBits(blk *[8]uint64, pos, w uint) uint64 {
	i, o := pos/64, pos%64
	x := blk[i] >> o
	if o+w > 64 {
		x |= blk[i+1] << (64 - o)
	}
	return x & (1<<w - 1)
}

// mortonInsertBits shifts block bits [pos, 512) up by w (dropping the top w,
// which the caller guarantees are zero) and writes v at pos.
func mortonInsertBits(blk *[8]uint64, pos, w uint, v uint64) {
	i0, o := pos/64, pos%64
	for i := uint(7); i > i0; i-- {
		blk[i] = blk[i]<<w | blk[i-1]>>(64-w)
	}
	low := blk[i0] & (1<<o - 1)
	blk[i0] = low | (blk[i0]&^(1<<o-1))<<w | v<<o
	if o+w > 64 {
		// v straddles: its high bits go to the next word, whose low bits
		// the loop above filled with bits from below pos; those are the
		// bits of blk[i0] that were above pos and shift across.
		spill := o + w - 64
		blk[i0+1] = blk[i0+1]&^(1<<spill-1) | v>>(64-o)
	}
}

// mortonRemoveBits deletes w bits at pos, shifting [pos+w, 512) down by w
// and zero-filling the top.
func mortonRemoveBits(blk *[8]uint64, pos, w uint) {
	i0, o := pos/64, pos%64
	low := blk[i0] & (1<<o - 1)
	for i := i0; i < 7; i++ {
		blk[i] = blk[i]>>w | blk[i+1]<<(64-w)
	}
	blk[7] >>= w
	blk[i0] = blk[i0]&^(1<<o-1) | low
}

// Add inserts key. It returns an error wrapping ErrFull, and leaves the
// filter exactly as it was, if no free slot is reachable within 500
// displacements.
func (m *Morton) Add(key []byte) error { return m.AddHash(Hash(key)) }

// AddHash is Add for a key whose Hash the caller holds.
func (m *Morton) AddHash(h uint64) error {
	if m.blocks == 0 {
		return errZeroValueFull
	}
	fp, p := m.derive(h)
	if m.canPlace(p) {
		m.put(m.block(p/mortonBuckets), p%mortonBuckets, fp)
		m.count++
		return nil
	}
	m.undo = m.undo[:0]
	m.setOTA(p)
	if s := m.alt(p, fp); m.canPlace(s) {
		m.put(m.block(s/mortonBuckets), s%mortonBuckets, fp)
		m.count++
		return nil
	}
	return m.walk(p, fp)
}

// touch logs block i before a change that a failed walk must undo.
func (m *Morton) touch(i uint64) *[8]uint64 {
	blk := m.block(i)
	m.undo = append(m.undo, mortonUndo{block: i, old: *blk})
	return blk
}

// setOTA marks bucket b as having overflowed (logged for rollback).
func (m *Morton) setOTA(b uint64) {
	i := b / mortonBuckets
	if m.words[i*mortonBlockWords+1]>>(b%mortonOTABits)&1 == 0 {
		m.touch(i)[1] |= 1 << (b % mortonOTABits)
	}
}

func (m *Morton) next() uint64 {
	m.rng += 0x9e3779b97f4a7c15
	return mix64(m.rng)
}

// walk places fp in bucket b by evicting a fingerprint: from b itself if b's
// counter is full, else (the block is full) from a random slot of the
// block. The victim moves toward its other bucket, which is computed from
// the bucket it leaves, and that bucket's OTA bit is set, since it may be
// the victim's primary. Starting at the new key's primary keeps it there
// (the biasing). Every block is logged before it changes; if no free slot
// is found within 500 evictions the log is replayed backwards and the
// generator restored, so the failed Add changes nothing (F1, F2).
func (m *Morton) walk(b, fp uint64) error {
	savedRNG := m.rng
	for k := 0; k < mortonMaxKicks; k++ {
		r := m.next()
		i, j := b/mortonBuckets, b%mortonBuckets
		blk := m.touch(i)
		off, cnt := mortonOffset(blk[0], j)
		var t, vj uint64
		if cnt == mortonBucketCap {
			t, vj = off+r%mortonBucketCap, j
		} else {
			t = r % uint64(m.slots)
			vj = mortonBucketOfSlot(blk[0], t)
		}
		victim := m.take(blk, vj, t)
		m.put(blk, j, fp)
		vb := i*mortonBuckets + vj
		m.setOTA(vb)
		fp, b = victim, m.alt(vb, victim)
		if m.canPlace(b) {
			m.put(m.touch(b/mortonBuckets), b%mortonBuckets, fp)
			m.count++
			return nil
		}
	}
	for k := len(m.undo) - 1; k >= 0; k-- {
		*m.block(m.undo[k].block) = m.undo[k].old
	}
	m.rng = savedRNG
	return errMortonFull
}

// mortonBucketOfSlot returns the bucket whose fingerprints include FSA slot
// t of a block with counters fca (t < the block's total).
func mortonBucketOfSlot(fca, t uint64) uint64 {
	var seen uint64
	for j := uint64(0); j < mortonBuckets; j++ {
		seen += fca >> (2 * j) & 3
		if t < seen {
			return j
		}
	}
	panic("filters: morton: slot past the block's fingerprints") // callers keep t < total
}

// Remove deletes one copy of key's fingerprint and reports whether it found
// one. Only remove keys known to be members.
func (m *Morton) Remove(key []byte) bool { return m.RemoveHash(Hash(key)) }

// RemoveHash is Remove for a key whose Hash the caller holds. The OTA bit is
// left set (it may cover other keys).
func (m *Morton) RemoveHash(h uint64) bool {
	if m.blocks == 0 {
		return false
	}
	fp, p := m.derive(h)
	if m.removeFrom(p, fp) {
		m.count--
		return true
	}
	if m.words[p/mortonBuckets*mortonBlockWords+1]>>(p%mortonOTABits)&1 != 0 && m.removeFrom(m.alt(p, fp), fp) {
		m.count--
		return true
	}
	return false
}

func (m *Morton) removeFrom(b, fp uint64) bool {
	blk := m.block(b / mortonBuckets)
	j := b % mortonBuckets
	off, cnt := mortonOffset(blk[0], j)
	for t := off; t < off+cnt; t++ {
		if mortonGetBits(blk, uint(mortonFSABit+t*uint64(m.fpBits)), m.fpBits) == fp {
			m.take(blk, j, t)
			return true
		}
	}
	return false
}

// Len returns the number of fingerprints stored.
func (m *Morton) Len() int { return int(m.count) }

// Cap returns the number of physical slots, the hard upper bound on Len.
func (m *Morton) Cap() int { return int(m.blocks) * int(m.slots) }

// LoadFactor returns Len()/Cap().
func (m *Morton) LoadFactor() float64 { return loadOf(m.count, uint64(m.Cap())) }

// FingerprintBits returns the fingerprint width.
func (m *Morton) FingerprintBits() int { return int(m.fpBits) }

// SizeBits returns the table size in bits (512 per block).
func (m *Morton) SizeBits() int { return int(m.blocks) * 512 }

// OverflowFraction returns the fraction of OTA bits set: roughly the
// fraction of absent-key lookups that read a second cache line.
func (m *Morton) OverflowFraction() float64 {
	set := 0
	for i := uint64(0); i < m.blocks; i++ {
		set += bits.OnesCount64(m.words[i*mortonBlockWords+1] & (1<<mortonOTABits - 1))
	}
	return loadOf(uint64(set), m.blocks*mortonOTABits)
}

// MarshalBinary encodes the filter (docs/format.md, "Morton filter").
func (m *Morton) MarshalBinary() ([]byte, error) {
	if m.fpBits == 0 {
		return nil, invalidf("filters: Morton.MarshalBinary: zero-value filter")
	}
	nw := m.blocks * mortonBlockWords
	w := newDynBody(36+8*int(nw), uint8(m.fpBits), mortonBuckets, uint8(m.slots))
	w.u64(m.blocks)
	appendWalkState(&w, m.count, m.rng, m.words[:nw])
	return mortonCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces m with the filter encoded in data. On error m is
// unchanged.
func (m *Morton) UnmarshalBinary(data []byte) error {
	return mortonCodec.unmarshal(m, data)
}

var mortonCodec = newDynCodec(TypeMorton, mortonVersion, "morton", 3, decodeMorton)

// decodeMorton checks the shape before allocating, then every block: at
// most S occupied slots and no bit set in the FSA past them (inserts shift
// the FSA up and rely on free space being zero), and the count equals the
// occupied slots. OTA bits cannot be checked (any pattern is reachable), and
// a wrong one only changes answers, never memory safety.
func decodeMorton(h dynHeader, r *bodyReader) (*Morton, error) {
	w, buckets, slots := uint(h[0]), h[1], uint(h[2])
	nb := r.u64("block count")
	st := readWalkState(r)
	r.check(w >= mortonMinBits && w <= 16, "morton: fingerprint width %d outside 5..16", w)
	r.check(buckets == mortonBuckets, "morton: %d buckets per block, want %d", buckets, mortonBuckets)
	r.check(w == 0 || slots == mortonFSABits/w, "morton: %d slots per block, width %d needs %d", slots, w, mortonFSABits/max(w, 1))
	r.check(nb >= 1 && nb <= mortonMaxBuckets/mortonBuckets, "morton: %d blocks", nb)
	if r.fail != nil {
		return nil, fmt.Errorf("filters: %w", r.fail)
	}
	words, err := readDynWords(r, "morton", st.nWords, nb*mortonBlockWords)
	if err != nil {
		return nil, err
	}
	m := newMortonShape(nb, w)
	copy(m.words, words)
	m.rng = st.rng
	var occupied uint64
	for i := uint64(0); i < nb; i++ {
		blk := m.block(i)
		total := mortonTotal(blk[0])
		if total > uint64(slots) {
			return nil, corruptf("morton: block %d holds %d fingerprints in %d slots", i, total, slots)
		}
		end := uint(mortonFSABit + total*uint64(w))
		for k := end / 64; k < mortonBlockWords; k++ {
			x := blk[k]
			if k == end/64 {
				x >>= end % 64
			}
			if x != 0 {
				return nil, corruptf("morton: block %d has bits set past its %d fingerprints", i, total)
			}
		}
		occupied += total
	}
	if occupied != st.count {
		return nil, corruptf("morton: header counts %d keys, table holds %d", st.count, occupied)
	}
	m.count = st.count
	return m, nil
}

var _ Filter = (*Morton)(nil)
