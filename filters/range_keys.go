package filters

import (
	"encoding/binary"
	"slices"
)

// frontCodedKeys is the keys a RangeBuilder holds until Finish, front
// coded in one arena: each key is uvarint(bytes shared with the previous
// key), uvarint(suffix length), suffix. A table's neighbouring keys share
// most of their bytes (user00123450, user00123452, ...), so a key takes a
// few bytes here where a whole copy took its length plus an 8-byte offset;
// that copying was most of a range filter's share of a table build
// (docs/design.md, "Range filters").
type frontCodedKeys struct {
	arena []byte
	n     int
	// lastBuf[:lastLen] is the last key added, whole: a fixed array, so
	// keeping it is a copy of the new suffix and nothing else.
	lastBuf [maxRangeKeyBytes]byte
	lastLen int
}

func (l *frontCodedKeys) reset() {
	l.arena, l.n, l.lastLen = l.arena[:0], 0, 0
}

// last is the last key added (valid until the next add).
func (l *frontCodedKeys) last() []byte { return l.lastBuf[:l.lastLen] }

// add appends k, which shares its first shared bytes with the last key.
func (l *frontCodedKeys) add(k []byte, shared int) {
	copy(l.grow(shared, len(k)-shared), k[shared:])
	copy(l.lastBuf[shared:], k[shared:])
	l.lastLen = len(k)
	l.n++
}

// grow appends the header of an entry of shared and suffix bytes and room
// for the suffix, which it returns for the caller to fill; the caller then
// updates lastBuf, lastLen and n. Both lengths are at most
// maxRangeKeyBytes; below 128 (almost always) a uvarint is the byte
// itself. RangeBuilder.addSorted writes that case itself, inline.
func (l *frontCodedKeys) grow(shared, suffix int) []byte {
	arena := slices.Grow(l.arena, suffix+2*binary.MaxVarintLen16)
	arena = binary.AppendUvarint(arena, uint64(shared))
	arena = binary.AppendUvarint(arena, uint64(suffix))
	start := len(arena)
	l.arena = arena[:start+suffix]
	return l.arena[start:]
}

// nextFrontCoded reads one key's entry off the front of *rest: how many
// leading bytes it shares with the key before it, and the bytes after.
// The arena is the builder's own, so it is well formed. keyCoder.codes
// reads the one-byte lengths case itself, inline.
func nextFrontCoded(rest *[]byte) (shared int, suffix []byte) {
	buf := *rest
	s, n1 := binary.Uvarint(buf)
	l, n2 := binary.Uvarint(buf[n1:])
	start := n1 + n2
	end := start + int(l)
	*rest = buf[end:]
	return int(s), buf[start:end]
}

// keyCursor reads a frontCodedKeys from the start, rebuilding each key.
type keyCursor struct {
	rest []byte
	key  []byte
}

func (l *frontCodedKeys) cursor() keyCursor { return keyCursor{rest: l.arena} }

// next returns the next key, valid until the following call. The caller
// calls it at most n times.
func (c *keyCursor) next() []byte {
	shared, suffix := nextFrontCoded(&c.rest)
	c.key = append(c.key[:shared], suffix...)
	return c.key
}

// keyShape is what a keyCoder learns from a sorted, distinct key set,
// gathered key by key as a RangeBuilder takes them, so Finish need not
// walk every key's bytes a second time to derive its coder.
type keyShape struct {
	n     int
	first []byte
	// prefixLen is the length of the prefix every key shares: for sorted
	// keys, the least of the neighbours' shared lengths.
	prefixLen int
	// maxLen is the longest key (as kept, at most maxRangeKeyBytes).
	maxLen int
	// maxShared is the longest prefix two neighbours share.
	maxShared int
	// alpha[j] holds the bytes (as symbols b+1) seen at key position j;
	// "end" is the coder's to add. Only positions below learnEnd are
	// learnt (invariant R4): alpha[j] for j < learnEnd
	// holds every key's byte at j, and for j >= learnEnd nothing.
	alpha [maxRangeKeyBytes]alphabet
	// learnEnd is where learning stops: just past the first position after
	// the distinguishing depth (maxShared+1), which the coder reads to see
	// whether one symbol fills it. Sparse keys bring several new low bytes
	// each, which the coder never reads; learning them was most of a sorted
	// key's cost. It only grows, by a catch-up pass over the stored keys.
	learnEnd int
	// catchUps counts those passes; each adds catchUps/4 positions of
	// slack, so a key set whose maxShared keeps growing pays a bounded
	// number of passes (about 45 over 256 positions), not one per byte.
	catchUps int
	// alphaEnd bounds the positions of alpha in use, for reset.
	alphaEnd int
}

func (s *keyShape) reset() {
	clear(s.alpha[:s.alphaEnd])
	s.n, s.first, s.prefixLen, s.maxLen, s.maxShared, s.alphaEnd = 0, s.first[:0], 0, 0, 0, 0
	s.learnEnd, s.catchUps = 0, 0
}

// observeRare is RangeBuilder.addSorted's shape update for the first key
// and for a key sharing more with its neighbour than learning has reached
// (shared+2 > learnEnd): the distinguishing depth has grown, and the
// stored keys' bytes at the new positions are learnt first (R4). It
// updates prefixLen and maxShared; the caller counts the key and its
// length.
func (s *keyShape) observeRare(k []byte, shared int, keys *frontCodedKeys) {
	if s.n == 0 {
		s.first = append(s.first[:0], k...)
		s.prefixLen = len(k)
		return
	}
	s.prefixLen = min(s.prefixLen, shared)
	s.maxShared = max(s.maxShared, shared)
	if need := s.maxShared + 2; need > s.learnEnd {
		s.catchUps++
		s.learnUpTo(keys, min(need+s.catchUps/4, maxRangeKeyBytes))
	}
}

// learnUpTo learns the stored keys' bytes at positions [learnEnd, end) and
// moves learnEnd there. A key's bytes below its shared length are its
// predecessor's, already counted, so only each entry's stored suffix is
// read, and no key is rebuilt.
func (s *keyShape) learnUpTo(keys *frontCodedKeys, end int) {
	from := s.learnEnd
	if end <= from {
		return
	}
	rest := keys.arena
	for range keys.n {
		shared, suffix := nextFrontCoded(&rest)
		lo, hi := max(from, shared), min(end, shared+len(suffix))
		for j := lo; j < hi; j++ {
			s.alpha[j].add(int(suffix[j-shared]) + 1)
		}
	}
	s.learnEnd = end
	s.alphaEnd = max(s.alphaEnd, end)
}
