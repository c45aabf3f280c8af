package filters

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// keyCoder is the order-preserving map from one table's byte-string keys to
// uint64 codes that a RangeFilter stores (invariant R2). It learns the keys'
// shape instead of reading raw bytes as a number: it strips the prefix every
// key shares, and numbers each following byte position in the radix of the
// symbols actually seen there. A position holding ASCII decimal digits
// counts in base 10, not 256, so a range of 180 ids covers about 180 codes
// rather than the ~10^5 integers a big-endian byte mapping gives it.
//
// Symbols: at position i of a key's suffix (after the prefix) the symbol is
// 0 if the key has ended ("end" sorts before every byte, as a shorter key
// sorts before its extensions) and b+1 for byte b. Codes are mixed-radix
// numbers over the first depth symbols, with digit i the symbol's rank in
// the alphabet of position i. Keys agreeing on those symbols share a code.
type keyCoder struct {
	prefix []byte
	// alpha[i] is the set of symbols of suffix position i; len is depth.
	alpha []alphabet
	// weight[i] is the product of the radices of positions after i, so a
	// code is sum(rank_i * weight[i]).
	weight []uint64
	// universe is the product of every radix: codes lie in [0, universe).
	universe uint64
}

// maxCodeUniverse bounds the product of radices so sums and the hashed
// universe of a RangeFilter stay far from uint64 overflow.
const maxCodeUniverse = 1 << 62

// maxCodeDepth bounds how many suffix positions a code reads.
const maxCodeDepth = 64

// alphabet is a set of symbols 0..256 (end, then bytes), as a bitmap.
type alphabet [5]uint64

func (a *alphabet) add(sym int)      { a[sym>>6] |= 1 << (sym & 63) }
func (a *alphabet) has(sym int) bool { return a[sym>>6]&(1<<(sym&63)) != 0 }

// less is the number of symbols in a that are smaller than sym.
func (a *alphabet) less(sym int) uint64 {
	w := sym >> 6
	n := bits.OnesCount64(a[w] & (1<<(sym&63) - 1))
	for i := 0; i < w; i++ {
		n += bits.OnesCount64(a[i])
	}
	return uint64(n)
}

// rank is less(sym) and has(sym) at once, for the query path.
func (a *alphabet) rank(sym int) (less uint64, has bool) {
	w := sym >> 6
	bit := uint64(1) << (sym & 63)
	n := bits.OnesCount64(a[w] & (bit - 1))
	for i := 0; i < w; i++ {
		n += bits.OnesCount64(a[i])
	}
	return uint64(n), a[w]&bit != 0
}

func (a *alphabet) size() uint64 {
	n := 0
	for _, w := range a {
		n += bits.OnesCount64(w)
	}
	return uint64(n)
}

// symbolAt is the symbol of s at position i.
func symbolAt(s []byte, i int) int {
	if i < len(s) {
		return int(s[i]) + 1
	}
	return 0
}

// newKeyCoder derives a coder from the shape of sorted distinct keys (a
// RangeBuilder ensures both), which keys holds. minLen is the length of
// the shortest key before any truncation, and truncLen the length keys
// were truncated to: the coder reads no position at or past it, where a
// truncated key's bytes are unknown.
func newKeyCoder(shape *keyShape, keys *frontCodedKeys, minLen, truncLen int) keyCoder {
	c := keyCoder{universe: 1}
	if shape.n == 0 {
		return c
	}
	prefixLen := shape.prefixLen
	c.prefix = append([]byte(nil), shape.first[:prefixLen]...)
	// The distinguishing depth tells every key apart: one more than the
	// longest suffix two neighbours share. Reading further would multiply
	// every range's code width by the radices there and separate no keys.
	limit := min(shape.maxLen-prefixLen+1, maxCodeDepth, truncLen-prefixLen)
	depth := min(max(shape.maxShared-prefixLen+1, 1), limit)
	// The shape learnt up to one position past the distinguishing depth
	// (R4); a single key, or positions the loop below reaches, may need
	// more, and then it learns every position up to the limit at once.
	shape.learnUpTo(keys, prefixLen+min(depth+1, limit))
	// alphaAt is position i's alphabet. A key that ended at or before
	// position i shows "end" there; the shortest key (kept whole, even
	// when keys were truncated) is the first to end.
	alphaAt := func(i int) alphabet {
		a := shape.alpha[prefixLen+i]
		if i >= minLen-prefixLen {
			a.add(0)
		}
		return a
	}
	// Positions past the distinguishing depth whose alphabet is one symbol
	// cost no width, and let the coder see where keys end (so a query just
	// past a key is not mistaken for it).
	for depth < limit {
		if prefixLen+depth >= shape.learnEnd {
			shape.learnUpTo(keys, prefixLen+limit)
		}
		if a := alphaAt(depth); a.size() != 1 {
			break
		}
		depth++
	}
	alpha := make([]alphabet, depth)
	for i := range alpha {
		alpha[i] = alphaAt(i)
	}
	universe := uint64(1)
	d := 0
	for ; d < depth; d++ {
		hi, lo := bits.Mul64(universe, alpha[d].size())
		if hi != 0 || lo > maxCodeUniverse {
			break
		}
		universe = lo
	}
	c.setAlphabets(alpha[:d])
	return c
}

// setAlphabets installs the alphabets and derives weights and universe.
// The caller has checked that the product of radices is <= maxCodeUniverse.
func (c *keyCoder) setAlphabets(alpha []alphabet) {
	c.alpha = append([]alphabet(nil), alpha...)
	c.weight = make([]uint64, len(alpha))
	w := uint64(1)
	for i := len(alpha) - 1; i >= 0; i-- {
		c.weight[i] = w
		w *= alpha[i].size()
	}
	c.universe = w
}

// SharedPrefixLen is the length of the common prefix of a and b (what
// RangeBuilder.AddAfter takes). It compares eight bytes at a time: a
// table build runs it on every pair of neighbouring keys.
func SharedPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// codeTable is codes' lookup table: entry [i][sym] is the rank of sym at
// position i times weight[i], so a digit is one load.
func (c *keyCoder) codeTable() [][257]uint64 {
	t := make([][257]uint64, len(c.alpha))
	for i := range c.alpha {
		for sym := range t[i] {
			t[i][sym] = c.alpha[i].less(sym) * c.weight[i]
		}
	}
	return t
}

// codes appends to out the distinct codes of keys, the sorted keys the
// coder was built from, in order (they never decrease, R2). A key's digits
// at the bytes it shares with its predecessor are the predecessor's, so
// each key costs a load and add per position from its first new byte, and
// those positions are its stored suffix: the key itself is never rebuilt.
// It runs once per key of every table built, so the arena's common entry
// (one-byte lengths) is read inline.
func (c *keyCoder) codes(keys *frontCodedKeys, out []uint64) []uint64 {
	t := c.codeTable()
	depth := len(t)
	prefixLen := len(c.prefix)
	// partial[i] is the sum of the current key's digits below position i.
	var partial [maxCodeDepth + 1]uint64
	rest := keys.arena
	for range keys.n {
		var shared int
		var suffix []byte
		if len(rest) >= 2 && rest[0] < 0x80 && rest[1] < 0x80 {
			end := 2 + int(rest[1])
			shared, suffix, rest = int(rest[0]), rest[2:end], rest[end:]
		} else {
			shared, suffix = nextFrontCoded(&rest)
		}
		// Keys after the first share at least the prefix.
		from := min(max(shared-prefixLen, 0), depth)
		acc := partial[from]
		// Position i after the prefix is byte skip+i of the stored suffix:
		// the suffix's bytes first, then "end" (symbol 0) past it.
		skip := prefixLen - shared
		i := from
		for ; i < depth && skip+i < len(suffix); i++ {
			partial[i] = acc
			acc += t[i][int(suffix[skip+i])+1]
		}
		for ; i < depth; i++ {
			partial[i] = acc
			acc += t[i][0]
		}
		partial[depth] = acc
		if len(out) == 0 || out[len(out)-1] != acc {
			out = append(out, acc)
		}
	}
	return out
}

// code is the code of a key the coder was built from.
func (c *keyCoder) code(key []byte) uint64 {
	s := key[len(c.prefix):]
	var acc uint64
	for i := range c.alpha {
		acc += c.alpha[i].less(symbolAt(s, i)) * c.weight[i]
	}
	return acc
}

// prefixOrder compares key's first len(prefix) bytes with the prefix: -1
// if key sorts before every key with the prefix, +1 if after, 0 if key
// has the prefix.
func (c *keyCoder) prefixOrder(key []byte) int {
	// Query bounds near a table's keys have its prefix: matching it eight
	// bytes at a time is cheaper than the ordered comparison (a call into
	// the runtime's compare, which was a third of a query's time).
	if SharedPrefixLen(key, c.prefix) == len(c.prefix) {
		return 0
	}
	n := min(len(key), len(c.prefix))
	if cmp := bytes.Compare(key[:n], c.prefix[:n]); cmp != 0 {
		return cmp
	}
	if n < len(c.prefix) {
		return -1 // key is a proper prefix of the prefix
	}
	return 0
}

// walk reads the suffix s while its symbols are in the alphabets. It
// returns the weighted digits read (acc), the position of the first
// symbol missing from its alphabet (i = depth when none is) and, there,
// how many symbols of the alphabet are smaller than it (less).
func (c *keyCoder) walk(s []byte) (acc uint64, i int, less uint64) {
	for i = range c.alpha {
		r, has := c.alpha[i].rank(symbolAt(s, i))
		if !has {
			return acc, i, r
		}
		acc += r * c.weight[i]
	}
	return acc, len(c.alpha), 0
}

// ceil returns the smallest code a built key >= lo can have, and false
// when no key the coder could have been built from is >= lo.
func (c *keyCoder) ceil(lo []byte) (uint64, bool) {
	switch c.prefixOrder(lo) {
	case -1:
		return 0, true
	case 1:
		return 0, false
	}
	acc, i, r := c.walk(lo[len(c.prefix):])
	switch {
	case i == len(c.alpha):
		return acc, true
	case r < c.alpha[i].size():
		// The next larger symbol, then the smallest of everything after.
		return acc + r*c.weight[i], true
	}
	// Every symbol here is smaller: the answer is the first code after all
	// codes sharing the digits so far.
	span := c.universe
	if i > 0 {
		span = c.weight[i-1]
	}
	if acc+span >= c.universe {
		return 0, false
	}
	return acc + span, true
}

// floorBefore returns the largest code a built key < hi can have, and false
// when no key the coder could have been built from is < hi.
func (c *keyCoder) floorBefore(hi []byte) (uint64, bool) {
	switch c.prefixOrder(hi) {
	case -1:
		return 0, false
	case 1:
		return c.universe - 1, true
	}
	s := hi[len(c.prefix):]
	acc, i, r := c.walk(s)
	switch {
	case i == len(c.alpha) && len(s) > len(c.alpha):
		// Built keys with this code may continue below hi.
		return acc, true
	case i < len(c.alpha) && r > 0:
		// The next smaller symbol, then the largest of everything after.
		return acc + (r-1)*c.weight[i] + c.weight[i] - 1, true
	}
	// Either every symbol at i is larger, or hi's whole suffix was read (a
	// built key with this code is hi or extends it, so none is < hi): the
	// answer is the last code before all codes sharing the digits so far.
	if acc == 0 {
		return 0, false
	}
	return acc - 1, true
}

// codeRange returns the codes [a, b] a built key in [lo, hi) can have (nil
// bounds are open), and false when no built key can lie in the range.
func (c *keyCoder) codeRange(lo, hi []byte) (a, b uint64, ok bool) {
	a, b = 0, c.universe-1
	if lo != nil {
		if a, ok = c.ceil(lo); !ok {
			return 0, 0, false
		}
	}
	if hi != nil {
		if b, ok = c.floorBefore(hi); !ok {
			return 0, 0, false
		}
	}
	return a, b, a <= b
}
