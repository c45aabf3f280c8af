package filters

import (
	"encoding/binary"
	"fmt"
)

// FuseOptions configures BuildBinaryFuse.
type FuseOptions struct {
	// Arity is the number of slots per key: 3 or 4. Arity 4 needs fewer
	// slots (1.075n against 1.125n at large n, [FUSE] Table 3) at the cost
	// of one more memory access per query.
	Arity int
	// FingerprintBits is the fingerprint width, 1 to 32. The false-positive
	// rate is 2^-FingerprintBits and each slot costs exactly this many bits.
	FingerprintBits int
}

func (o FuseOptions) validate() error {
	if o.Arity != 3 && o.Arity != 4 {
		return invalidf("binary fuse arity must be 3 or 4, got %d", o.Arity)
	}
	if o.FingerprintBits < 1 || o.FingerprintBits > 32 {
		return invalidf("binary fuse fingerprint width must be 1 to 32 bits, got %d", o.FingerprintBits)
	}
	return nil
}

// BinaryFuse is a static binary fuse filter ([FUSE]) of arity 3 or 4 with
// fingerprints of any width from 1 to 32 bits, bit-packed so an 11-bit filter
// costs 11 bits per slot. Its false-positive rate is 2^-FingerprintBits
// (invariant F4), which lets a caller pick the width that minimises wasted
// reads for a memory budget. At n = 10^6 it costs 1.13 (arity 3) or 1.077
// (arity 4) slots per key. Queries allocate nothing and are safe from many
// goroutines at once.
type BinaryFuse struct {
	fuseGeometry
	arity   uint8
	bits    uint8  // fingerprint width, 1..32
	fpShift uint8  // 64 - bits
	fpMask  uint32 // (1 << bits) - 1
	// data holds size fingerprints of bits bits each, slot i at bit offset
	// i*bits, least significant bit first, followed by 8 zero bytes so that
	// any entry is read with one unaligned 8-byte load: bit offset within
	// the first byte (<= 7) plus the width (<= 32) always fits 64 bits.
	data []byte
}

// binaryFuseVersion is the body format version written by MarshalBinary.
//
//	1: arity u8, bits u8, fuse header (seed, n, segLog, segCount, size),
//	   then ceil(size*bits/8) bytes of packed fingerprints.
const binaryFuseVersion = 1

// BuildBinaryFuse builds a binary fuse filter from keys with the given arity
// and fingerprint width. Duplicate keys are allowed and count once; an empty
// set gives a filter that reports every key absent.
func BuildBinaryFuse(keys [][]byte, opts FuseOptions) (*BinaryFuse, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("filters: binary fuse: %w", err)
	}
	return new(FuseBuilder).BuildBinaryFuse(hashKeys(keys), opts)
}

// BuildBinaryFuseFromHashes builds a binary fuse filter from keys' Hash
// values, which may contain duplicates. The slice is read, not retained.
func BuildBinaryFuseFromHashes(hashes []uint64, opts FuseOptions) (*BinaryFuse, error) {
	return new(FuseBuilder).BuildBinaryFuse(hashes, opts)
}

// BuildBinaryFuse is BuildBinaryFuseFromHashes reusing b's scratch buffers.
// The filter does not alias b.
func (b *FuseBuilder) BuildBinaryFuse(hashes []uint64, opts FuseOptions) (*BinaryFuse, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("filters: binary fuse: %w", err)
	}
	layoutFor := fuse3Layout
	if opts.Arity == 4 {
		layoutFor = fuse4Layout
	}
	p, err := b.peel(hashes, layoutFor)
	if err != nil {
		return nil, fmt.Errorf("filters: binary fuse (arity %d, %d bits): build from %d hashes: %w",
			opts.Arity, opts.FingerprintBits, len(hashes), err)
	}
	f := newBinaryFuse(newFuseGeometry(&p), uint8(opts.Arity), uint8(opts.FingerprintBits))
	f.data = make([]byte, packedFuseBytes(f.size, f.bits)+8)
	// Reverse peel order, as for Xor8: the peeled slot gets fingerprint ^
	// (the key's other slots). XORing the value in is enough because the
	// slot is still zero, and it leaves the neighbouring packed entries
	// untouched.
	data, w := f.data, uint64(f.bits)
	for k := len(p.order) - 1; k >= 0; k-- {
		hh := p.order[k]
		s := p.layout.positions(hh)
		v := fingerprintN(hh, f.fpShift) ^ packedWord(data, s[0], w) ^ packedWord(data, s[1], w) ^ packedWord(data, s[2], w)
		if f.arity == 4 {
			v ^= packedWord(data, s[3], w)
		}
		f.xorIn(s[p.roles[k]&3], v)
	}
	return f, nil
}

func newBinaryFuse(g fuseGeometry, arity, bits uint8) *BinaryFuse {
	return &BinaryFuse{
		fuseGeometry: g, arity: arity, bits: bits,
		fpShift: 64 - bits, fpMask: uint32(widthMask(uint(bits))),
	}
}

// packedFuseBytes is the number of bytes size entries of bits bits occupy.
func packedFuseBytes(size uint32, bits uint8) uint64 {
	return (uint64(size)*uint64(bits) + 7) / 8
}

// get returns the fingerprint in slot i (i < size). Slicing exactly 8
// bytes leaves one bounds check (the slice) instead of two.
func (f *BinaryFuse) get(i uint32) uint32 {
	return packedWord(f.data, i, uint64(f.bits)) & f.fpMask
}

// xorIn XORs v into slot i.
func (f *BinaryFuse) xorIn(i uint32, v uint32) {
	bit := uint64(i) * uint64(f.bits)
	at := bit >> 3
	b := f.data[at : at+8]
	binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^uint64(v&f.fpMask)<<(bit&7))
}

// MayContain reports false only if key is definitely not in the set.
func (f *BinaryFuse) MayContain(key []byte) bool { return f.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash is h.
func (f *BinaryFuse) MayContainHash(h uint64) bool {
	hh := staticMix(h, f.seed)
	fp := fingerprintN(hh, f.fpShift)
	data, w := f.data, uint64(f.bits)
	if f.arity == 3 {
		p0, p1, p2 := fuse3Positions(hh, f.segCountLen, f.segLen, f.segMask)
		if p2 >= f.size {
			return false // only the empty filter: p0 < p1 < p2 < size otherwise
		}
		// Masking once after XOR-ing the unmasked words equals masking
		// each (the mask distributes over XOR).
		x := packedWord(data, p0, w) ^ packedWord(data, p1, w) ^ packedWord(data, p2, w)
		return fp == x&f.fpMask
	}
	p0, p1, p2, p3 := fuse4Positions(hh, f.segCountLen, f.segLen, f.segMask, f.segLog)
	if p3 >= f.size {
		return false // only the empty filter
	}
	x := packedWord(data, p0, w) ^ packedWord(data, p1, w) ^ packedWord(data, p2, w) ^ packedWord(data, p3, w)
	return fp == x&f.fpMask
}

// packedWord returns 32 bits starting at slot i of width w: the slot's
// fingerprint in the low w bits, garbage above (callers mask).
func packedWord(data []byte, i uint32, w uint64) uint32 {
	bit := uint64(i) * w
	at := bit >> 3
	return uint32(binary.LittleEndian.Uint64(data[at:at+8]) >> (bit & 7))
}

// Options returns the arity and fingerprint width the filter was built with.
func (f *BinaryFuse) Options() FuseOptions {
	return FuseOptions{Arity: int(f.arity), FingerprintBits: int(f.bits)}
}

// SizeInBytes returns the size of the filter's encoding: the packed
// fingerprints plus 47 bytes. In memory it holds 8 more bytes of padding.
func (f *BinaryFuse) SizeInBytes() int {
	return envelopeHeaderSize + 2 + fuseHeaderSize + int(packedFuseBytes(f.size, f.bits)) + envelopeTrailer
}

// MarshalBinary encodes the filter (docs/format.md, "BinaryFuse body (type
// 8)").
func (f *BinaryFuse) MarshalBinary() ([]byte, error) {
	if f.arity == 0 {
		return nil, invalidf("filters: BinaryFuse.MarshalBinary: zero-value filter")
	}
	packed := f.data[:packedFuseBytes(f.size, f.bits)]
	w := bodyWriter{buf: make([]byte, 0, 2+fuseHeaderSize+len(packed))}
	w.u8(f.arity)
	w.u8(f.bits)
	f.writeHeader(&w)
	w.bytes(packed)
	return binaryFuseCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces f with the filter encoded in data. On error f is
// unchanged.
func (f *BinaryFuse) UnmarshalBinary(data []byte) error {
	return binaryFuseCodec.unmarshal(f, data)
}

var binaryFuseCodec = newCodec(TypeBinaryFuse, binaryFuseVersion, "binary fuse", decodeBinaryFuseBody)

func decodeBinaryFuseBody(r *bodyReader) (*BinaryFuse, error) {
	arity, bits := r.u8("arity"), r.u8("fingerprint width")
	r.check(arity == 3 || arity == 4, "arity %d is not 3 or 4", arity)
	r.check(bits >= 1 && bits <= 32, "fingerprint width %d is not 1 to 32", bits)
	if r.fail != nil {
		return nil, r.finish()
	}
	f := newBinaryFuse(readFuseGeometry(r, uint32(arity)), arity, bits)
	nbytes := packedFuseBytes(f.size, f.bits)
	packed := r.take(nbytes, "fingerprints")
	if err := r.finish(); err != nil {
		return nil, err
	}
	// Bits past the last entry are zero in every encoding we write; refuse
	// anything else so decoding is one-to-one.
	if tail := uint64(f.size) * uint64(f.bits) % 8; tail != 0 && packed[len(packed)-1]>>tail != 0 {
		return nil, corruptf("padding bits after the last fingerprint are not zero")
	}
	f.data = make([]byte, nbytes+8)
	copy(f.data, packed)
	return f, nil
}
