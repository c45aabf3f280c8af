package filters

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

// TestStaticFormatSecondReader is the "enough to write a second reader"
// check for docs/format.md ("Static filters"): it decodes the pinned golden
// encodings with only the formulas the document states (no decoder or
// position helper from this package, only Hash) and requires the golden keys
// to be found and the answers to match the package's decoder on other keys.
func TestStaticFormatSecondReader(t *testing.T) {
	fmix := func(h uint64) uint64 {
		h ^= h >> 33
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		h *= 0xc4ceb9fe1a85ec53
		h ^= h >> 33
		return h
	}
	// reader returns a MayContain built from the documented layout.
	reader := func(t *testing.T, enc []byte) func(key []byte) bool {
		if string(enc[:4]) != "SVKF" || enc[5] != 1 {
			t.Fatalf("envelope")
		}
		body := enc[16 : len(enc)-4]
		typ := enc[4]
		arity, width := uint64(3), uint64(8)
		switch typ {
		case 5: // Xor8
			seed := binary.LittleEndian.Uint64(body[0:])
			bl := uint64(binary.LittleEndian.Uint32(body[16:]))
			fps := body[20:]
			return func(key []byte) bool {
				hh := fmix(Hash(key) + seed)
				red := func(x uint32) uint64 { return (uint64(x) * bl) >> 32 }
				p0 := red(uint32(hh))
				p1 := red(uint32(bits.RotateLeft64(hh, 21))) + bl
				p2 := red(uint32(bits.RotateLeft64(hh, 42))) + 2*bl
				fp := (hh * 0x9e3779b97f4a7c15) >> 56
				return bl > 0 && fp == uint64(fps[p0]^fps[p1]^fps[p2])
			}
		case 6, 7:
			if typ == 7 {
				width = 16
			}
		case 8:
			arity, width = uint64(body[0]), uint64(body[1])
			body = body[2:]
		}
		seed := binary.LittleEndian.Uint64(body[0:])
		segLog := uint64(body[16])
		segCount := uint64(binary.LittleEndian.Uint32(body[17:]))
		size := uint64(binary.LittleEndian.Uint32(body[21:]))
		packed := append(append([]byte(nil), body[25:]...), make([]byte, 8)...)
		L, mask := uint64(1)<<segLog, uint64(1)<<segLog-1
		slot := func(i uint64) uint64 {
			switch {
			case typ == 6:
				return uint64(packed[i])
			case typ == 7:
				return uint64(binary.LittleEndian.Uint16(packed[2*i:]))
			}
			bit := i * width
			return binary.LittleEndian.Uint64(packed[bit/8:]) >> (bit % 8) & (1<<width - 1)
		}
		return func(key []byte) bool {
			if size == 0 {
				return false
			}
			hh := fmix(Hash(key) + seed)
			p0, _ := bits.Mul64(hh, segCount*L)
			ps := []uint64{p0, (p0 + L) ^ (hh & mask)}
			if arity == 3 {
				ps = append(ps, (p0+2*L)^((hh>>18)&mask))
			} else {
				ps = append(ps, (p0+2*L)^((hh>>segLog)&mask), (p0+3*L)^((hh>>(2*segLog))&mask))
			}
			x := uint64(0)
			for _, p := range ps {
				x ^= slot(p)
			}
			return (hh*0x9e3779b97f4a7c15)>>(64-width) == x
		}
	}
	for _, k := range staticKinds() {
		f, err := k.fromKeys(goldenKeys)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := f.MarshalBinary()
		may := reader(t, enc)
		for _, key := range goldenKeys {
			if !may(key) {
				t.Fatalf("%s: documented reader misses %q", k.name, key)
			}
		}
		keys := make([][]byte, 3000)
		for i := range keys {
			keys[i] = []byte{byte(i), byte(i >> 8), 'k'}
		}
		g, _ := k.fromKeys(keys[:1000])
		genc, _ := g.MarshalBinary()
		gmay := reader(t, genc)
		for _, key := range keys {
			if gmay(key) != g.MayContain(key) {
				t.Fatalf("%s: documented reader and decoder disagree on %q", k.name, key)
			}
		}
	}
}
