package filters

import (
	"fmt"
	"unsafe"
)

// fuseGeometry is the query-time form of a fuse staticLayout, embedded in
// every binary fuse filter type.
type fuseGeometry struct {
	seed        uint64
	n           uint64 // distinct keys built from
	segCountLen uint64 // segCount*segLen: slots a key's first position may take
	segLen      uint32
	segMask     uint32
	segCount    uint32
	size        uint32 // total slots: (segCount+arity-1)*segLen
	segLog      uint8
}

func newFuseGeometry(p *peeled) fuseGeometry {
	l := &p.layout
	return fuseGeometry{
		seed: p.seed, n: uint64(len(p.order)), segCountLen: l.segCountLen,
		segLen: l.segLen, segMask: l.segMask, segCount: l.segCount, size: l.size, segLog: l.segLog,
	}
}

// fuseHeaderSize is the encoded size of the fields writeFuseHeader writes.
const fuseHeaderSize = 8 + 8 + 1 + 4 + 4

// writeFuseHeader writes the fields every fuse body starts with (after the
// general filter's arity and width bytes): seed u64, n u64, segLog u8,
// segCount u32, size u32 (docs/format.md, "Fuse header").
func (g *fuseGeometry) writeHeader(w *bodyWriter) {
	w.u64(g.seed)
	w.u64(g.n)
	w.u8(g.segLog)
	w.u32(g.segCount)
	w.u32(g.size)
}

// readFuseGeometry reads and validates what writeHeader wrote, for a filter
// of the given arity. It allocates nothing; failures are recorded in r.
func readFuseGeometry(r *bodyReader, arity uint32) fuseGeometry {
	seed, n := r.u64("seed"), r.u64("key count")
	segLog, segCount, size := r.u8("segment length"), r.u32("segment count"), r.u32("slot count")
	if r.fail != nil {
		return fuseGeometry{}
	}
	l, err := fuseLayoutFromHeader(arity, n, segLog, segCount, size)
	if err != nil {
		r.setFail(err)
		return fuseGeometry{}
	}
	return fuseGeometry{
		seed: seed, n: n, segCountLen: l.segCountLen, segLen: l.segLen, segMask: l.segMask,
		segCount: l.segCount, size: l.size, segLog: l.segLog,
	}
}

// Len returns the number of distinct keys the filter was built from.
func (g *fuseGeometry) Len() int { return int(g.n) }

// BinaryFuse8 is a static 3-wise binary fuse filter with 8-bit fingerprints
// ([FUSE]): the slots are cut into segments of a power-of-two length and each
// key owns one slot in each of three consecutive segments; a key is reported
// present when the XOR of its three slots equals its fingerprint. At n = 10^6
// it costs 9.04 bits per key (1.13n slots) and has a false-positive rate of
// 2^-8 = 0.39% (invariant F4); small sets cost more per key (see
// docs/filters.md). Queries allocate nothing and are safe from many
// goroutines at once.
type BinaryFuse8 struct{ fuse3[uint8] }

// BinaryFuse16 is BinaryFuse8 with 16-bit fingerprints: about 18.1 bits per
// key at n = 10^6 and a false-positive rate of 2^-16 = 0.0015%.
type BinaryFuse16 struct{ fuse3[uint16] }

// fuse3 is BinaryFuse8 and BinaryFuse16 but for the fingerprint type T:
// they differ in nothing else, so their build, size and encoding are
// written once, here. The query is not: a method of fuse3[T] is too large
// to inline, so promoting it would add a call to every MayContainHash
// (go tool objdump shows the wrapper); each width keeps its own.
type fuse3[T uint8 | uint16] struct {
	fuseGeometry
	fps []T
}

// fixedFuse is BinaryFuse8 or BinaryFuse16 (a struct that is a fuse3[T]
// and nothing more), so that the build and the decoder can return the
// public type itself.
type fixedFuse[T uint8 | uint16] interface{ ~struct{ fuse3[T] } }

// Body format versions written by MarshalBinary.
//
//	1: fuse header (seed, n, segLog, segCount, size), then size fingerprints
//	   (bytes for BinaryFuse8, little-endian uint16 for BinaryFuse16).
const (
	binaryFuse8Version  = 1
	binaryFuse16Version = 1
)

func fuse3Layout(n int) staticLayout { return fuseLayout(3, n) }
func fuse4Layout(n int) staticLayout { return fuseLayout(4, n) }

// BuildBinaryFuse8 builds a binary fuse filter from keys. Duplicate keys are
// allowed and count once; an empty set gives a filter that reports every
// key absent.
func BuildBinaryFuse8(keys [][]byte) (*BinaryFuse8, error) {
	return BuildBinaryFuse8FromHashes(hashKeys(keys))
}

// BuildBinaryFuse8FromHashes builds a binary fuse filter from keys' Hash
// values, which may contain duplicates. The slice is read, not retained.
func BuildBinaryFuse8FromHashes(hashes []uint64) (*BinaryFuse8, error) {
	return new(FuseBuilder).BuildBinaryFuse8(hashes)
}

// BuildBinaryFuse8 is BuildBinaryFuse8FromHashes reusing b's scratch
// buffers. The filter does not alias b.
func (b *FuseBuilder) BuildBinaryFuse8(hashes []uint64) (*BinaryFuse8, error) {
	return buildFuse3[BinaryFuse8](b, hashes, "binary fuse8")
}

// BuildBinaryFuse16 builds a 16-bit binary fuse filter from keys. Duplicate
// keys are allowed and count once; an empty set gives a filter that reports
// every key absent.
func BuildBinaryFuse16(keys [][]byte) (*BinaryFuse16, error) {
	return BuildBinaryFuse16FromHashes(hashKeys(keys))
}

// BuildBinaryFuse16FromHashes builds a 16-bit binary fuse filter from keys'
// Hash values, which may contain duplicates. The slice is read, not retained.
func BuildBinaryFuse16FromHashes(hashes []uint64) (*BinaryFuse16, error) {
	return new(FuseBuilder).BuildBinaryFuse16(hashes)
}

// BuildBinaryFuse16 is BuildBinaryFuse16FromHashes reusing b's scratch
// buffers. The filter does not alias b.
func (b *FuseBuilder) BuildBinaryFuse16(hashes []uint64) (*BinaryFuse16, error) {
	return buildFuse3[BinaryFuse16](b, hashes, "binary fuse16")
}

// buildFuse3 is the build of BinaryFuse8 and BinaryFuse16: peel on a 3-wise
// fuse layout, then assign T-wide fingerprints in reverse peel order (see
// Xor8's builder for why this is correct). name prefixes errors.
func buildFuse3[F fixedFuse[T], T uint8 | uint16](b *FuseBuilder, hashes []uint64, name string) (*F, error) {
	p, err := b.peel(hashes, fuse3Layout)
	if err != nil {
		return nil, fmt.Errorf("filters: %s: build from %d hashes: %w", name, len(hashes), err)
	}
	g := newFuseGeometry(&p)
	fps := make([]T, g.size)
	for k := len(p.order) - 1; k >= 0; k-- {
		hh := p.order[k]
		var s [3]uint32
		s[0], s[1], s[2] = fuse3Positions(hh, g.segCountLen, g.segLen, g.segMask)
		fps[s[p.roles[k]%3]] ^= staticFingerprint[T](hh) ^ fps[s[0]] ^ fps[s[1]] ^ fps[s[2]]
	}
	return &F{fuse3[T]{fuseGeometry: g, fps: fps}}, nil
}

// SizeInBytes returns the size of the filter's encoding, which is also its
// memory footprint to within a few words: the fingerprints plus 45 bytes.
func (f *fuse3[T]) SizeInBytes() int {
	return envelopeHeaderSize + fuseHeaderSize + int(unsafe.Sizeof(T(0)))*len(f.fps) + envelopeTrailer
}

// body encodes the fuse header and the fingerprints: bytes for BinaryFuse8,
// little-endian uint16 for BinaryFuse16.
func (f *fuse3[T]) body() []byte {
	w := bodyWriter{buf: make([]byte, 0, fuseHeaderSize+int(unsafe.Sizeof(T(0)))*len(f.fps))}
	f.writeHeader(&w)
	switch fps := any(f.fps).(type) {
	case []uint8:
		w.bytes(fps)
	case []uint16:
		w.u16s(fps)
	}
	return w.buf
}

// decodeFuse3 decodes what fuse3.body wrote: the decoder of BinaryFuse8
// and BinaryFuse16.
func decodeFuse3[F fixedFuse[T], T uint8 | uint16](r *bodyReader) (*F, error) {
	g := readFuseGeometry(r, 3)
	var fps any
	if unsafe.Sizeof(T(0)) == 1 {
		fps = r.bytes(uint64(g.size), "fingerprints")
	} else {
		fps = r.u16s(uint64(g.size), "fingerprints")
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	return &F{fuse3[T]{fuseGeometry: g, fps: fps.([]T)}}, nil
}

// MayContain reports false only if key is definitely not in the set.
func (f *BinaryFuse8) MayContain(key []byte) bool { return f.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash is h.
func (f *BinaryFuse8) MayContainHash(h uint64) bool {
	hh := staticMix(h, f.seed)
	p0, p1, p2 := fuse3Positions(hh, f.segCountLen, f.segLen, f.segMask)
	fps := f.fps
	if uint(p2) >= uint(len(fps)) {
		// Only the empty filter: p0 < p1 < p2 < size by construction and
		// by the decoder's checks.
		return false
	}
	return fingerprint8(hh) == fps[p0]^fps[p1]^fps[p2]
}

// MarshalBinary encodes the filter (docs/format.md, "BinaryFuse8 body (type
// 6), BinaryFuse16 body (type 7)").
func (f *BinaryFuse8) MarshalBinary() ([]byte, error) { return binaryFuse8Codec.seal(f.body()), nil }

// UnmarshalBinary replaces f with the filter encoded in data. On error f is
// unchanged.
func (f *BinaryFuse8) UnmarshalBinary(data []byte) error {
	return binaryFuse8Codec.unmarshal(f, data)
}

// MayContain reports false only if key is definitely not in the set.
func (f *BinaryFuse16) MayContain(key []byte) bool { return f.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash is h.
func (f *BinaryFuse16) MayContainHash(h uint64) bool {
	hh := staticMix(h, f.seed)
	p0, p1, p2 := fuse3Positions(hh, f.segCountLen, f.segLen, f.segMask)
	fps := f.fps
	if uint(p2) >= uint(len(fps)) {
		return false // only the empty filter (see BinaryFuse8)
	}
	return fingerprint16(hh) == fps[p0]^fps[p1]^fps[p2]
}

// MarshalBinary encodes the filter (docs/format.md, "BinaryFuse8 body (type
// 6), BinaryFuse16 body (type 7)").
func (f *BinaryFuse16) MarshalBinary() ([]byte, error) { return binaryFuse16Codec.seal(f.body()), nil }

// UnmarshalBinary replaces f with the filter encoded in data. On error f is
// unchanged.
func (f *BinaryFuse16) UnmarshalBinary(data []byte) error {
	return binaryFuse16Codec.unmarshal(f, data)
}

var (
	binaryFuse8Codec  = newCodec(TypeBinaryFuse8, binaryFuse8Version, "binary fuse8", decodeFuse3[BinaryFuse8])
	binaryFuse16Codec = newCodec(TypeBinaryFuse16, binaryFuse16Version, "binary fuse16", decodeFuse3[BinaryFuse16])
)
