package filters

import "fmt"

// The bodies of the dynamic filters (Cuckoo, Vacuum, Morton, Quotient,
// CountingQuotient, VectorQuotient; docs/format.md) share a frame: a
// four-byte shape header of parameter bytes padded with reserved zeros,
// then fields of the filter's own, then the table, which ends the body.
// The helpers below write and read that frame once, so the six decoders
// check the reserved bytes, the table's size and the body's end alike.

// dynHeaderSize is the length of a dynamic filter's shape header.
const dynHeaderSize = 4

// dynHeader is a decoded shape header: the parameter bytes, then the
// reserved ones.
type dynHeader = [dynHeaderSize]uint8

// newDynCodec is newCodec for a dynamic filter whose shape header has
// params parameter bytes: decode receives the header and the reader
// positioned after it. A nonzero reserved byte is recorded in the reader
// like any failed check, so decode reports it where it reports its own.
func newDynCodec[T any, PT interface {
	*T
	Filter
}](typ Type, version uint8, name string, params int, decode func(h dynHeader, r *bodyReader) (*T, error)) *codec[T] {
	return newCodec[T, PT](typ, version, name, func(body []byte) (*T, error) {
		r := bodyReader{buf: body}
		h := readDynHeader(&r, name, params)
		return decode(h, &r)
	})
}

// newDynBody starts a body of capacity size with the shape header: params,
// then reserved zeros up to dynHeaderSize bytes.
func newDynBody(size int, params ...uint8) bodyWriter {
	w := bodyWriter{buf: make([]byte, 0, size)}
	w.buf = append(w.buf, params...)
	for range dynHeaderSize - len(params) {
		w.u8(0)
	}
	return w
}

// readDynHeader reads the shape header of a body with n parameter bytes and
// records a corruption if any reserved byte after them is not zero. name
// prefixes the error.
func readDynHeader(r *bodyReader, name string, n int) dynHeader {
	var h dynHeader
	copy(h[:], r.take(dynHeaderSize, "shape header"))
	for i := n; i < dynHeaderSize; i++ {
		r.check(h[i] == 0, "%s: reserved byte %d is %d", name, i, h[i])
	}
	return h
}

// walkState is the tail of the bodies of the filters that displace keys
// by a random walk (Cuckoo, Vacuum, Morton), after their shape fields: the
// key count, the walk generator's state and the number of table words,
// which follow (readDynWords).
type walkState struct{ count, rng, nWords uint64 }

// appendWalkState writes a walk state and the table words.
func appendWalkState(w *bodyWriter, count, rng uint64, words []uint64) {
	w.u64(count)
	w.u64(rng)
	w.u64(uint64(len(words)))
	w.u64s(words)
}

// readWalkState reads the three counts appendWalkState writes first.
func readWalkState(r *bodyReader) walkState {
	return walkState{count: r.u64("count"), rng: r.u64("random state"), nWords: r.u64("word count")}
}

// readDynWords reads a body's closing table of nWords words, once the
// caller has checked the shape header: the stored count must be want, the
// count the decoded shape needs, and nothing may follow the words. The
// caller allocates its table only after this succeeds, so a header claiming
// a large table over a short body allocates nothing (F3). name prefixes
// errors.
func readDynWords(r *bodyReader, name string, nWords, want uint64) ([]uint64, error) {
	r.check(nWords == want, "%s: %d words, shape needs %d", name, nWords, want)
	words := r.u64s(nWords, "table")
	if err := r.finish(); err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	return words, nil
}

// readDynBytes is readDynWords for a table of size bytes whose length the
// header implies instead of storing it: the rest of the body must be
// exactly the table. The bytes are returned in place, not copied.
func readDynBytes(r *bodyReader, name string, size uint64) ([]byte, error) {
	r.check(uint64(len(r.buf)) == size, "%s: table needs %d bytes, body has %d", name, size, len(r.buf))
	raw := r.take(size, "table")
	if err := r.finish(); err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	return raw, nil
}
