package filters

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"unsafe"
)

// Every encoding is wrapped in one envelope (docs/format.md, "Filter envelope"):
//
//	offset  size  field
//	0       4     magic "SVKF"
//	4       1     filter type (Type)
//	5       1     format version of that type's body
//	6       2     reserved, zero
//	8       8     body length n, little-endian
//	16      n     body
//	16+n    4     CRC32C (Castagnoli) of bytes [0, 16+n), little-endian
const (
	envelopeMagic      = "SVKF"
	envelopeHeaderSize = 16
	envelopeTrailer    = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sealEnvelope wraps body (built by an encoder) and returns the full encoding.
func sealEnvelope(t Type, version uint8, body []byte) []byte {
	out := make([]byte, 0, envelopeHeaderSize+len(body)+envelopeTrailer)
	out = append(out, envelopeMagic...)
	out = append(out, byte(t), version, 0, 0)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(body)))
	out = append(out, body...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// openEnvelope validates the envelope and returns the type, version and body.
// The body aliases data.
func openEnvelope(data []byte) (Type, uint8, []byte, error) {
	if len(data) < envelopeHeaderSize+envelopeTrailer {
		return 0, 0, nil, corruptf("encoding is %d bytes, shorter than the %d-byte envelope",
			len(data), envelopeHeaderSize+envelopeTrailer)
	}
	if string(data[:4]) != envelopeMagic {
		return 0, 0, nil, corruptf("bad magic %q", data[:4])
	}
	if data[6] != 0 || data[7] != 0 {
		return 0, 0, nil, corruptf("reserved header bytes are not zero")
	}
	bodyLen := binary.LittleEndian.Uint64(data[8:16])
	if bodyLen != uint64(len(data)-envelopeHeaderSize-envelopeTrailer) {
		return 0, 0, nil, corruptf("header says body is %d bytes, encoding holds %d",
			bodyLen, len(data)-envelopeHeaderSize-envelopeTrailer)
	}
	end := len(data) - envelopeTrailer
	want := binary.LittleEndian.Uint32(data[end:])
	if got := crc32.Checksum(data[:end], castagnoli); got != want {
		return 0, 0, nil, corruptf("checksum mismatch: stored %#08x, computed %#08x", want, got)
	}
	return Type(data[4]), data[5], data[envelopeHeaderSize:end], nil
}

// openTyped is openEnvelope for an UnmarshalBinary that expects one type.
func openTyped(data []byte, want Type) (uint8, []byte, error) {
	t, version, body, err := openEnvelope(data)
	if err != nil {
		return 0, nil, err
	}
	if t != want {
		return 0, nil, corruptf("encoding holds filter type %d, want %d", t, want)
	}
	return version, body, nil
}

// bodyWriter appends little-endian fields to a body.
type bodyWriter struct{ buf []byte }

func (w *bodyWriter) u8(v uint8)   { w.buf = append(w.buf, v) }
func (w *bodyWriter) u32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }
func (w *bodyWriter) u64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }
func (w *bodyWriter) f64(v float64) {
	w.u64(math.Float64bits(v))
}
func (w *bodyWriter) bytes(b []byte) { w.buf = append(w.buf, b...) }
func (w *bodyWriter) u16s(vs []uint16) {
	for _, v := range vs {
		w.buf = binary.LittleEndian.AppendUint16(w.buf, v)
	}
}
func (w *bodyWriter) u64s(vs []uint64) {
	for _, v := range vs {
		w.u64(v)
	}
}

// bodyReader consumes little-endian fields from a body. The first failure is
// sticky: later reads return zero values and err() reports it, so a decoder
// can read every field and check once. Slice reads check the remaining length
// before allocating, so a hostile count cannot force a huge allocation
// (invariant F3).
type bodyReader struct {
	buf  []byte
	fail error
}

func (r *bodyReader) take(n uint64, what string) []byte {
	if r.fail != nil {
		return nil
	}
	if n > uint64(len(r.buf)) {
		r.fail = corruptf("truncated reading %s: need %d bytes, %d remain", what, n, len(r.buf))
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *bodyReader) u8(what string) uint8 {
	if b := r.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

func (r *bodyReader) u32(what string) uint32 {
	if b := r.take(4, what); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *bodyReader) u64(what string) uint64 {
	if b := r.take(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *bodyReader) f64(what string) float64 {
	return math.Float64frombits(r.u64(what))
}

// bytes returns a copy of the next n bytes.
func (r *bodyReader) bytes(n uint64, what string) []byte {
	b := r.take(n, what)
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// u16s decodes n little-endian uint16 values.
func (r *bodyReader) u16s(n uint64, what string) []uint16 { return readUints[uint16](r, n, what) }

// u64s decodes n little-endian uint64 values.
func (r *bodyReader) u64s(n uint64, what string) []uint64 { return readUints[uint64](r, n, what) }

// readUints decodes n little-endian values of T's width, checking that the
// byte count neither overflows nor exceeds what remains before allocating.
func readUints[T uint16 | uint64](r *bodyReader, n uint64, what string) []T {
	size := uint64(unsafe.Sizeof(T(0)))
	if n > math.MaxUint64/size {
		r.setFail(corruptf("%s: count %d overflows", what, n))
		return nil
	}
	b := r.take(size*n, what)
	if b == nil {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		if size == 2 {
			out[i] = T(binary.LittleEndian.Uint16(b[2*i:]))
		} else {
			out[i] = T(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return out
}

func (r *bodyReader) setFail(err error) {
	if r.fail == nil {
		r.fail = err
	}
}

// check records a corruption if ok is false; it reads like an assertion on
// decoded parameters ("impossible parameters" in invariant F3).
func (r *bodyReader) check(ok bool, format string, args ...any) {
	if !ok {
		r.setFail(corruptf(format, args...))
	}
}

// finish reports the first failure, or trailing bytes the decoder did not use.
func (r *bodyReader) finish() error {
	if r.fail != nil {
		return r.fail
	}
	if len(r.buf) != 0 {
		return corruptf("%d unexpected trailing bytes in body", len(r.buf))
	}
	return nil
}
