package filters

import "math/bits"

// eliasFano is a strictly increasing sequence of n values below universe in
// the Elias-Fano encoding (Elias 1974, Fano 1971): each value's low lowBits
// bits are packed in low; its high part h is a one bit at position h+i of
// high (i the value's index), so the zeros before that one count h. It takes
// n*(lowBits+1) + universe>>lowBits + 1 bits, about 2 + log2(universe/n) bits
// per value, and answers "is any value in [x, y]" with one select and a short
// scan.
type eliasFano struct {
	n        uint64
	universe uint64
	lowBits  uint
	low      []uint64
	high     []uint64
	highLen  uint64 // bits used in high: n + universe>>lowBits + 1
	// zeroSample[k] is the position in high of zero number k*zeroSampleStep.
	// It is derived (at build or decode), never stored.
	zeroSample []uint64
}

// zeroSampleStep trades index memory (8 bytes per step) for select scan.
const zeroSampleStep = 256

// efLowBits is the canonical low width for n values below universe.
func efLowBits(n, universe uint64) uint {
	if n == 0 || universe <= n {
		return 0
	}
	return uint(bits.Len64(universe/n) - 1)
}

// newEliasFano encodes values, which must be strictly increasing and below
// universe.
func newEliasFano(values []uint64, universe uint64) eliasFano {
	n := uint64(len(values))
	ef := eliasFano{n: n, universe: universe, lowBits: efLowBits(n, universe)}
	ef.highLen = n + (universe-1)>>ef.lowBits + 1
	if universe == 0 {
		ef.highLen = n
	}
	ef.low = make([]uint64, (n*uint64(ef.lowBits)+63)/64)
	ef.high = make([]uint64, (ef.highLen+63)/64)
	mask := uint64(1)<<ef.lowBits - 1
	for i, v := range values {
		ef.setLow(uint64(i), v&mask)
		p := v>>ef.lowBits + uint64(i)
		ef.high[p/64] |= 1 << (p % 64)
	}
	ef.buildSamples()
	return ef
}

func (ef *eliasFano) setLow(i, v uint64) {
	if ef.lowBits == 0 {
		return
	}
	bit := i * uint64(ef.lowBits)
	w, off := bit/64, bit%64
	ef.low[w] |= v << off
	if off+uint64(ef.lowBits) > 64 {
		ef.low[w+1] |= v >> (64 - off)
	}
}

func (ef *eliasFano) getLow(i uint64) uint64 {
	if ef.lowBits == 0 {
		return 0
	}
	bit := i * uint64(ef.lowBits)
	w, off := bit/64, bit%64
	v := ef.low[w] >> off
	if off+uint64(ef.lowBits) > 64 {
		v |= ef.low[w+1] << (64 - off)
	}
	return v & (1<<ef.lowBits - 1)
}

func (ef *eliasFano) bit(p uint64) bool { return ef.high[p/64]&(1<<(p%64)) != 0 }

// buildSamples finds every zeroSampleStep-th zero of high. It counts a
// word's zeros at once and visits bits only in words holding a sample, so
// it costs a popcount per word, not a step per zero: every table build
// runs it.
func (ef *eliasFano) buildSamples() {
	ef.zeroSample = ef.zeroSample[:0]
	var zeros uint64  // zeros before word wi
	next := uint64(0) // the index of the next zero to sample
	for wi, w := range ef.high {
		inv := ^w
		if end := ef.highLen - uint64(wi)*64; end < 64 {
			inv &= 1<<end - 1
		}
		c := uint64(bits.OnesCount64(inv))
		for ; next < zeros+c; next += zeroSampleStep {
			v := inv
			for skip := next - zeros; skip > 0; skip-- {
				v &= v - 1
			}
			ef.zeroSample = append(ef.zeroSample, uint64(wi)*64+uint64(bits.TrailingZeros64(v)))
		}
		zeros += c
	}
}

// select0 returns the position of zero number j (from 0) in high. The
// caller ensures j is below the number of zeros, universe>>lowBits + 1.
func (ef *eliasFano) select0(j uint64) uint64 {
	p := ef.zeroSample[j/zeroSampleStep]
	rest := j % zeroSampleStep
	wi := p / 64
	// Zeros in the first word at or after p.
	inv := ^ef.high[wi] &^ (1<<(p%64) - 1)
	for {
		c := uint64(bits.OnesCount64(inv))
		if rest < c {
			for ; rest > 0; rest-- {
				inv &= inv - 1
			}
			return wi*64 + uint64(bits.TrailingZeros64(inv))
		}
		rest -= c
		wi++
		inv = ^ef.high[wi]
	}
}

// anyIn reports whether some value lies in [x, y], x <= y.
func (ef *eliasFano) anyIn(x, y uint64) bool {
	if ef.n == 0 || x >= ef.universe {
		return false
	}
	h := x >> ef.lowBits
	// Bucket h starts just after zero number h-1.
	var p uint64
	if h > 0 {
		p = ef.select0(h-1) + 1
	}
	for ; p < ef.highLen; p++ {
		if !ef.bit(p) {
			h++
			if h<<ef.lowBits > y {
				return false
			}
			continue
		}
		v := h<<ef.lowBits | ef.getLow(p-h)
		if v >= x {
			return v <= y
		}
	}
	return false
}
