package filters

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// VectorQuotient is a vector quotient filter (Pandey, Conway, Durie,
// Bender, Farach-Colton and Johnson, "Vector Quotient Filters: Overcoming
// the Time/Space Trade-Off in Filter Design", SIGMOD 2021): an array of
// 64-byte blocks, each a small quotient filter of its own ("mini-filter").
// A key's fingerprint is a bucket number (its quotient within a block) and a
// tag (its remainder); it has two candidate blocks and Add puts it in the
// emptier one (power of two choices), which keeps blocks evenly loaded, so
// no key is ever moved and every operation touches at most two cache lines.
//
// Block layout (vqfBlock8, 8-bit tags): 48 tag bytes and a 128-bit
// metadata vector holding 80 ones, one per bucket, and one zero per stored
// tag. Reading the vector from bit 0, bucket i's tags are the zeros between
// the (i-1)-th and the i-th one, in the same order as in the tag array, so
// tag index = metadata position − bucket number. With 16-bit tags
// (vqfBlock16) a block holds 28 tags and 36 buckets in a 64-bit vector.
// Bits past the last stored tag's position are zero, so a block's tag count
// is the position of its highest one + 1 − buckets; tags past the count are
// zero.
//
// Invariants (kept by Add and Remove; checked by the decoder):
//
//	VQ1 every block's metadata has exactly `buckets` ones, tag count ≤ slots,
//	   and no bit set past position buckets + count − 1;
//	VQ2 unused tag slots are zero;
//	VQ3 the header count is the sum of the block counts;
//	VQ4 the second block is (c − b1) mod B, with c a hash of the fingerprint
//	   (bucket, tag) alone, so the map is its own inverse and two keys with
//	   one fingerprint that share one candidate block share both. Removing
//	   any stored copy of a fingerprint from the pair is then as good as
//	   removing the key's own (the argument of partial-key cuckoo hashing),
//	   which keeps F1 across Removes of members.
//
// Remove must only be called for keys known to be members (package doc). A
// VectorQuotient is not safe for concurrent mutation.
//
// The zero value (a VectorQuotient no constructor or UnmarshalBinary made) is an
// empty filter with no slots: queries answer "absent", Remove finds nothing,
// Len and LoadFactor are 0, Add returns an error wrapping ErrFull (it has
// nowhere to put a key) and MarshalBinary one wrapping ErrInvalidArgument
// (it has no encoding). A declared-but-unmade filter thus fails loudly on
// its first Add instead of indexing an empty table.
type VectorQuotient struct {
	tagBits uint // 8 or 16
	nb      uint32
	b8      []vqfBlock8  // when tagBits == 8
	b16     []vqfBlock16 // when tagBits == 16
	count   uint64
}

// vqfBlock8 is one 64-byte mini-filter with 8-bit tags (see the type doc).
type vqfBlock8 struct {
	md   md128
	tags [vqf8Slots]uint8
}

// vqfBlock16 is one 64-byte mini-filter with 16-bit tags.
type vqfBlock16 struct {
	md   uint64
	tags [vqf16Slots]uint16
}

const (
	// Block shapes from Pandey et al. 2021, §4: a 512-bit block holds s tags
	// of w bits and a (b+s)-bit metadata vector, s·w + b + s = 512. The paper
	// picks s = 48, b = 80 for w = 8 and s = 28, b = 36 for w = 16: about 0.6
	// and 0.78 tags a bucket at full load.
	vqf8Slots    = 48
	vqf8Buckets  = 80
	vqf16Slots   = 28
	vqf16Buckets = 36

	// VectorQuotientLoad is the load the constructor sizes for: n keys fill
	// n / (0.9·slots) blocks. With two choices the first failed Add comes
	// at 0.93–0.95 load on tables of 2^10 to 2^20 slots (Pandey et al. report
	// ~93%; our fill-to-failure measurement is in docs/filters.md, "Counting
	// quotient and vector quotient at n = 1M, ε ≈ 0.4%", and
	// TestVectorQuotientReachesLoad asserts ≥ 0.9).
	VectorQuotientLoad = 0.9

	// vqfMaxBlocks keeps block numbers within 32 bits (reduce32).
	vqfMaxBlocks = 1<<32 - 1
	// vectorQuotientVersion is the body format version: 1 is the first
	// (and only) layout, described in docs/format.md, "Vector quotient filter
	// (type 13)".
	vectorQuotientVersion = 1
	// vqfBlockBytes is the encoded and in-memory size of a block.
	vqfBlockBytes = 64
)

var errVectorQuotientFull = fmt.Errorf("filters: vector quotient: both candidate blocks are full: %w", ErrFull)

// vqfFPModel is the false-positive rate of a filter with w-bit tags at load
// α: an absent key matches if one of the tags in its bucket in either block
// equals its tag; each block's bucket holds α·s/b tags on average, so the
// rate is 1 − (1 − 2^−w)^(2·α·s/b) ≤ 2·α·(s/b)/2^w.
func vqfFPModel(tagBits uint, load float64) float64 {
	perBucket := float64(vqf8Slots) / vqf8Buckets
	if tagBits == 16 {
		perBucket = float64(vqf16Slots) / vqf16Buckets
	}
	return 1 - math.Pow(1-math.Exp2(-float64(tagBits)), 2*load*perBucket)
}

// NewVectorQuotient returns an empty vector quotient filter for n keys at
// false-positive rate fpRate. Tags are 8 bits when the model rate at the
// sizing load 0.9 (vqfFPModel: 0.42%) meets fpRate, else 16 bits (0.0022%);
// a smaller fpRate is rejected with ErrInvalidArgument. Past load 0.9 the
// rate grows in proportion to the load (0.44% for 8-bit tags at 0.94).
// The block count is ceil(n / (0.9·slots)), any integer: no power-of-two
// rounding.
func NewVectorQuotient(n int, fpRate float64) (*VectorQuotient, error) {
	if err := checkSizing(n, fpRate); err != nil {
		return nil, err
	}
	var tagBits uint
	switch {
	case fpRate >= vqfFPModel(8, VectorQuotientLoad):
		tagBits = 8
	case fpRate >= vqfFPModel(16, VectorQuotientLoad):
		tagBits = 16
	default:
		return nil, invalidf("vector quotient: false-positive rate %v is below the 16-bit tags' %.3g",
			fpRate, vqfFPModel(16, VectorQuotientLoad))
	}
	slots := vqf8Slots
	if tagBits == 16 {
		slots = vqf16Slots
	}
	nb := math.Ceil(float64(n) / (float64(slots) * VectorQuotientLoad))
	if nb > vqfMaxBlocks {
		return nil, invalidf("vector quotient: n = %d needs more than 2^32 blocks", n)
	}
	return newVectorQuotientShape(tagBits, uint32(nb)), nil
}

// newVectorQuotientShape builds an empty filter of nb ≥ 1 blocks.
func newVectorQuotientShape(tagBits uint, nb uint32) *VectorQuotient {
	f := &VectorQuotient{tagBits: tagBits, nb: nb}
	if tagBits == 8 {
		f.b8 = make([]vqfBlock8, nb)
		for i := range f.b8 {
			f.b8[i].md = md128{lo: lowMask(64), hi: lowMask(vqf8Buckets - 64)}
		}
	} else {
		f.b16 = make([]vqfBlock16, nb)
		for i := range f.b16 {
			f.b16[i].md = lowMask(vqf16Buckets)
		}
	}
	return f
}

// derive splits a key hash into tag (bits 0..w-1), bucket (bits 16..31,
// reduced onto the bucket count), first block (high 32 bits) and second
// block (VQ4). The three fields come from disjoint hash bits.
func (f *VectorQuotient) derive(h uint64, buckets uint64) (tag, bucket uint64, b1, b2 uint32) {
	tag = h & (1<<f.tagBits - 1)
	bucket = (h >> 16 & 0xffff) * buckets >> 16
	b1 = reduce32(uint32(h>>32), f.nb)
	fp := bucket<<16 | tag
	c := reduce32(uint32((fp+1)*0x9e3779b97f4a7c15>>32), f.nb)
	b2 = c - b1
	if c < b1 {
		b2 += f.nb
	}
	return tag, bucket, b1, b2
}

// bucketRange returns the tag indexes [t0, t1) of bucket i in md.
func bucketRange(md md128, i uint) (t0, t1 uint) {
	end := md.sel(i)
	return uint(md.prevOne(end)+1) - i, end - i
}

// MayContain reports whether key may have been added.
func (f *VectorQuotient) MayContain(key []byte) bool { return f.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash the caller holds.
//
// With 8-bit tags it follows the paper's order (§5): compare the tag with
// all 48 tags of both blocks first, branch-free (SWAR, six words a block),
// and only in a block where some tag matches (about 16% of blocks for an
// absent key at load 0.9: 1 − (255/256)^(48·0.9)) pay for the select that
// finds the bucket's range. Selecting first costs two selects,
// unpredictable branches and a variable-length loop on every query: it
// measured 1.8x our cuckoo filter's time on absent-key lookups, this order
// 1.0–1.2x.
func (f *VectorQuotient) MayContainHash(h uint64) bool {
	if f.nb == 0 {
		return false // zero value: an empty filter (see the type doc)
	}
	if f.tagBits == 8 {
		tag, bucket, b1, b2 := f.derive(h, vqf8Buckets)
		x, y := &f.b8[b1], &f.b8[b2]
		t := tag * bwL8
		// Both blocks are tested before either's select, so their loads
		// issue together (short-circuiting per block measured slower: the
		// second block's cache miss waited for the first's select).
		ax, ay := x.anyMatch(t), y.anyMatch(t)
		if !ax && !ay {
			return false
		}
		return ax && x.has(uint(bucket), t) || ay && y.has(uint(bucket), t)
	}
	tag, bucket, b1, b2 := f.derive(h, vqf16Buckets)
	x, y := &f.b16[b1], &f.b16[b2]
	return x.find(uint(bucket), uint16(tag)) >= 0 || y.find(uint(bucket), uint16(tag)) >= 0
}

const (
	swarLo7 = 0x7f7f7f7f7f7f7f7f
	// swarGather moves bit 0 of every byte to bits 56..63 in a multiply
	// (each byte's bit lands on a distinct top bit; no cross term reaches
	// the top byte).
	swarGather = 0x0102040810204080
)

// matchByte returns an 8-bit mask of the bytes of w equal to t. The zero
// test is the exact form (no false flags above a true match): the high bit
// of ((y&0x7f…)+0x7f…)|y is clear only for zero bytes.
func matchByte(w uint64, t uint64) uint64 {
	y := w ^ t
	z := ^((y&swarLo7 + swarLo7) | y | swarLo7) // 0x80 in each zero byte
	return (z >> 7) * swarGather >> 56
}

// anyMatch reports whether some tag slot of the block may equal the tag
// repeated in every byte of t: the classic "has zero byte" test, three
// operations a word, whose only false flags sit above a true zero byte, so
// it is exact about whether any byte matches.
func (b *vqfBlock8) anyMatch(t uint64) bool {
	le := binary.LittleEndian
	var acc uint64
	for k := 0; k < vqf8Slots; k += 8 {
		y := le.Uint64(b.tags[k:]) ^ t
		acc |= (y - bwL8) &^ y
	}
	return acc&bwH8 != 0
}

// matches returns a mask with bit t set iff tag t equals tag; unused tag
// slots hold 0 and may match tag 0, so callers intersect the result with a
// bucket range (which never reaches past the stored tags).
func (b *vqfBlock8) matches(tag uint8) uint64 {
	t := uint64(tag) * bwL8
	le := binary.LittleEndian
	return matchByte(le.Uint64(b.tags[0:]), t) |
		matchByte(le.Uint64(b.tags[8:]), t)<<8 |
		matchByte(le.Uint64(b.tags[16:]), t)<<16 |
		matchByte(le.Uint64(b.tags[24:]), t)<<24 |
		matchByte(le.Uint64(b.tags[32:]), t)<<32 |
		matchByte(le.Uint64(b.tags[40:]), t)<<40
}

// has reports whether bucket i holds the tag repeated in every byte of t.
// A bucket rarely holds more than a few tags, so one 8-byte window over
// [t0, t1) settles it (read from t0, or from byte 40 near the end so the
// load stays inside the tag array); longer buckets take the exact mask.
func (b *vqfBlock8) has(i uint, t uint64) bool {
	t0, t1 := bucketRange(b.md, i)
	n := t1 - t0
	if n > 8 {
		return b.matches(uint8(t))&(lowMask(t1)&^lowMask(t0)) != 0
	}
	off := min(t0, vqf8Slots-8)
	y := binary.LittleEndian.Uint64(b.tags[off:])>>(8*(t0-off)) ^ t
	z := ^((y&swarLo7 + swarLo7) | y | swarLo7) // 0x80 in each zero byte
	return z&lowMask(8*n) != 0
}

// find returns the index of a tag equal to tag in bucket i, or -1: the
// bucket's range by select, then the one-window compare of has (the exact
// zero-byte flags give the first matching byte).
func (b *vqfBlock8) find(i uint, tag uint8) int {
	t0, t1 := bucketRange(b.md, i)
	n := t1 - t0
	if n > 8 {
		if m := b.matches(tag) & (lowMask(t1) &^ lowMask(t0)); m != 0 {
			return bits.TrailingZeros64(m)
		}
		return -1
	}
	off := min(t0, vqf8Slots-8)
	y := binary.LittleEndian.Uint64(b.tags[off:])>>(8*(t0-off)) ^ uint64(tag)*bwL8
	z := ^((y&swarLo7 + swarLo7) | y | swarLo7) & lowMask(8*n)
	if z == 0 {
		return -1
	}
	return int(t0) + bits.TrailingZeros64(z)/8
}

func (b *vqfBlock16) find(i uint, tag uint16) int {
	t0, t1 := bucketRange(md128{lo: b.md}, i)
	for t := t0; t < t1 && t < vqf16Slots; t++ {
		if b.tags[t] == tag {
			return int(t)
		}
	}
	return -1
}

func (b *vqfBlock8) len() uint  { return b.md.top() - vqf8Buckets }
func (b *vqfBlock16) len() uint { return md128{lo: b.md}.top() - vqf16Buckets }

// insert appends tag to bucket i; the caller checked the block has room.
func (b *vqfBlock8) insert(i uint, tag uint8) {
	k := b.len()
	end := b.md.sel(i)
	t := end - i
	b.md = b.md.insertZero(end)
	copy(b.tags[t+1:k+1], b.tags[t:k])
	b.tags[t] = tag
}

func (b *vqfBlock16) insert(i uint, tag uint16) {
	k := b.len()
	md := md128{lo: b.md}
	end := md.sel(i)
	t := end - i
	b.md = md.insertZero(end).lo
	copy(b.tags[t+1:k+1], b.tags[t:k])
	b.tags[t] = tag
}

// remove deletes the tag at index t of bucket i.
func (b *vqfBlock8) remove(i, t uint) {
	k := b.len()
	b.md = b.md.deleteBit(t + i)
	copy(b.tags[t:k-1], b.tags[t+1:k])
	b.tags[k-1] = 0
}

func (b *vqfBlock16) remove(i, t uint) {
	k := b.len()
	b.md = md128{lo: b.md}.deleteBit(t + i).lo
	copy(b.tags[t:k-1], b.tags[t+1:k])
	b.tags[k-1] = 0
}

// Add inserts key into the emptier of its two blocks. If both are full it
// returns an error wrapping ErrFull and changes nothing (nothing was
// written: the check comes first).
func (f *VectorQuotient) Add(key []byte) error { return f.AddHash(Hash(key)) }

// AddHash is Add for a key whose Hash the caller holds.
//
// The 8- and 16-bit paths here and in RemoveHash are written out twice on
// purpose: a generic over the block type compiles to one body for both
// block pointers, calling len, insert and find through a dictionary, and
// measured about 5-9% slower on tables that fit in cache (issue #15).
func (f *VectorQuotient) AddHash(h uint64) error {
	if f.nb == 0 {
		return errZeroValueFull
	}
	if f.tagBits == 8 {
		tag, bucket, b1, b2 := f.derive(h, vqf8Buckets)
		x, y := &f.b8[b1], &f.b8[b2]
		if y.len() < x.len() {
			x = y
		}
		if x.len() >= vqf8Slots {
			return errVectorQuotientFull
		}
		x.insert(uint(bucket), uint8(tag))
	} else {
		tag, bucket, b1, b2 := f.derive(h, vqf16Buckets)
		x, y := &f.b16[b1], &f.b16[b2]
		if y.len() < x.len() {
			x = y
		}
		if x.len() >= vqf16Slots {
			return errVectorQuotientFull
		}
		x.insert(uint(bucket), uint16(tag))
	}
	f.count++
	return nil
}

// Remove deletes one copy of key's fingerprint and reports whether it found
// one. Only remove keys known to be members (see the type doc).
func (f *VectorQuotient) Remove(key []byte) bool { return f.RemoveHash(Hash(key)) }

// RemoveHash is Remove for a key whose Hash the caller holds.
func (f *VectorQuotient) RemoveHash(h uint64) bool {
	if f.nb == 0 {
		return false
	}
	if f.tagBits == 8 {
		tag, bucket, b1, b2 := f.derive(h, vqf8Buckets)
		for _, b := range [2]*vqfBlock8{&f.b8[b1], &f.b8[b2]} {
			if t := b.find(uint(bucket), uint8(tag)); t >= 0 {
				b.remove(uint(bucket), uint(t))
				f.count--
				return true
			}
		}
		return false
	}
	tag, bucket, b1, b2 := f.derive(h, vqf16Buckets)
	for _, b := range [2]*vqfBlock16{&f.b16[b1], &f.b16[b2]} {
		if t := b.find(uint(bucket), uint16(tag)); t >= 0 {
			b.remove(uint(bucket), uint(t))
			f.count--
			return true
		}
	}
	return false
}

// Len returns the number of fingerprints stored (adds minus removes).
func (f *VectorQuotient) Len() int { return int(f.count) }

// Cap returns the number of tag slots, the hard upper bound on Len.
func (f *VectorQuotient) Cap() int {
	if f.tagBits == 8 {
		return int(f.nb) * vqf8Slots
	}
	return int(f.nb) * vqf16Slots
}

// LoadFactor returns Len()/Cap().
func (f *VectorQuotient) LoadFactor() float64 { return loadOf(f.count, uint64(f.Cap())) }

// TagBits returns the tag width chosen at construction: 8 or 16.
func (f *VectorQuotient) TagBits() int { return int(f.tagBits) }

// SizeBits returns the memory of the table in bits (512 per block).
func (f *VectorQuotient) SizeBits() uint64 { return uint64(f.nb) * 8 * vqfBlockBytes }

// MarshalBinary encodes the filter (docs/format.md, "Vector quotient
// filter").
func (f *VectorQuotient) MarshalBinary() ([]byte, error) {
	if f.tagBits == 0 {
		return nil, invalidf("filters: VectorQuotient.MarshalBinary: zero-value filter")
	}
	w := newDynBody(20+vqfBlockBytes*int(f.nb), uint8(f.tagBits))
	w.u32(f.nb)
	w.u64(f.count)
	if f.tagBits == 8 {
		for i := range f.b8 {
			b := &f.b8[i]
			w.u64(b.md.lo)
			w.u64(b.md.hi)
			w.bytes(b.tags[:])
		}
	} else {
		for i := range f.b16 {
			b := &f.b16[i]
			w.u64(b.md)
			w.u16s(b.tags[:])
		}
	}
	return vectorQuotientCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces f with the filter encoded in data. On error f is
// unchanged.
func (f *VectorQuotient) UnmarshalBinary(data []byte) error {
	return vectorQuotientCodec.unmarshal(f, data)
}

var vectorQuotientCodec = newDynCodec(TypeVectorQuotient, vectorQuotientVersion, "vector quotient", 1, decodeVectorQuotient)

// decodeVectorQuotient checks the shape against the body length before
// allocating, then VQ1-VQ3 block by block, so every decoded block is one Add
// and Remove could have built and no later operation can index past a tag
// array (F3).
func decodeVectorQuotient(h dynHeader, r *bodyReader) (*VectorQuotient, error) {
	tagBits := uint(h[0])
	nb := r.u32("block count")
	count := r.u64("count")
	r.check(tagBits == 8 || tagBits == 16, "vector quotient: tag width %d is not 8 or 16", tagBits)
	r.check(nb >= 1, "vector quotient: zero blocks")
	if r.fail != nil {
		return nil, fmt.Errorf("filters: %w", r.fail)
	}
	raw, err := readDynBytes(r, "vector quotient", uint64(nb)*vqfBlockBytes)
	if err != nil {
		return nil, err
	}
	f := &VectorQuotient{tagBits: tagBits, nb: nb}
	var total uint64
	if tagBits == 8 {
		f.b8 = make([]vqfBlock8, nb)
		for i := range f.b8 {
			p := raw[i*vqfBlockBytes:]
			b := &f.b8[i]
			b.md = md128{binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:])}
			copy(b.tags[:], p[16:vqfBlockBytes])
			k, err := vqfCheckBlock(b.md, b.tags[:], vqf8Buckets, i)
			if err != nil {
				return nil, err
			}
			total += uint64(k)
		}
	} else {
		f.b16 = make([]vqfBlock16, nb)
		for i := range f.b16 {
			p := raw[i*vqfBlockBytes:]
			b := &f.b16[i]
			b.md = binary.LittleEndian.Uint64(p)
			for j := range b.tags {
				b.tags[j] = binary.LittleEndian.Uint16(p[8+2*j:])
			}
			k, err := vqfCheckBlock(md128{lo: b.md}, b.tags[:], vqf16Buckets, i)
			if err != nil {
				return nil, err
			}
			total += uint64(k)
		}
	}
	if total != count {
		return nil, corruptf("vector quotient: header counts %d keys, blocks hold %d", count, total)
	}
	f.count = count
	return f, nil
}

// vqfCheckBlock checks VQ1 and VQ2 for block i, of metadata md and tag
// array tags, and returns the block's tag count.
func vqfCheckBlock[T uint8 | uint16](md md128, tags []T, buckets uint, i int) (uint, error) {
	slots := uint(len(tags))
	ones := uint(popcount128(md))
	if ones != buckets {
		return 0, corruptf("vector quotient: block %d: metadata has %d bucket ends, want %d", i, ones, buckets)
	}
	k := md.top() - buckets // top ≥ buckets since there are `buckets` ones
	if k > slots {
		return 0, corruptf("vector quotient: block %d holds %d tags, at most %d fit", i, k, slots)
	}
	for _, t := range tags[k:] {
		if t != 0 {
			return 0, corruptf("vector quotient: block %d: unused tag slot is not zero", i)
		}
	}
	return k, nil
}

func popcount128(m md128) int { return bits.OnesCount64(m.lo) + bits.OnesCount64(m.hi) }

// Compile-time check that VectorQuotient is a Filter.
var _ Filter = (*VectorQuotient)(nil)
