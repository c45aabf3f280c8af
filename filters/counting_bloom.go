package filters

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

const (
	// countingBloomMax is the saturation value of a 4-bit counter.
	countingBloomMax = 15
	// countingBloomNibbleLSB has the low bit of every nibble of a word set.
	countingBloomNibbleLSB = 0x1111111111111111
)

// countingBloomVersion is the body format version of a CountingBloom encoding.
//
//	1: m (u64, prime), k (u32), ceil(m/2) counter bytes, two 4-bit counters
//	   per byte (counter 2i in the low nibble of byte i).
const countingBloomVersion = 1

// CountingBloom is a Bloom filter of 4-bit counters that supports Remove. It
// has the sizing and probe sequence of Bloom (prime m, distinct probes) with
// each bit widened to a counter, packed two per byte (sixteen per word,
// counter i in word i>>4 at bits 4(i&15)..4(i&15)+3): four times the space.
//
// Counters saturate at 15. A saturated counter is never decremented, because
// once it has overflowed the filter no longer knows how many keys rely on it;
// decrementing could reach zero while members remain (a false negative).
// Saturation therefore only ever costs false positives. At the optimal k and
// design load, Fan et al. ("Summary Cache", 1998) bound the probability that
// any counter exceeds 15 by 1.37e-15 per counter, so in practice saturation
// only happens when one key is added many times.
//
// Remove must only be called for keys that were added (package doc, "Removing
// from dynamic filters"); it refuses keys it can prove absent. Not safe for
// concurrent mutation. The zero value answers "maybe" for every key.
type CountingBloom struct {
	words      []uint64
	bloomShape // m is the number of counters
}

// NewCountingBloom returns an empty counting Bloom filter for n keys at
// false-positive rate fpRate, with the m and k NewBloom would choose.
func NewCountingBloom(n int, fpRate float64) (*CountingBloom, error) {
	m, k, err := bloomSizing(n, fpRate)
	if err != nil {
		return nil, fmt.Errorf("filters: NewCountingBloom: %w", err)
	}
	return newCountingBloomMK(m, k), nil
}

func newCountingBloomMK(m uint64, k int) *CountingBloom {
	return &CountingBloom{words: make([]uint64, (m+15)/16), bloomShape: bloomShape{m: m, k: k}}
}

func (c *CountingBloom) counter(i uint64) uint64 {
	return c.words[i>>4] >> ((i & 15) * 4) & 0xf
}

// Add inserts key, incrementing its k counters (those at 15 stay at 15).
func (c *CountingBloom) Add(key []byte) { c.AddHash(Hash(key)) }

// AddHash inserts the key whose Hash is h.
func (c *CountingBloom) AddHash(h uint64) { c.step(h, 1) }

// step adds unit to each of h's k counters that is not saturated: unit is
// 1 for an Add and ^0 (minus one, modulo 2^64) for a Remove, which only
// runs when every counter is at least 1, so no nibble borrows from the
// next. A saturated counter stays at 15 either way: it no longer knows its
// count.
func (c *CountingBloom) step(h, unit uint64) {
	m := c.m
	p, d := bloomProbes(h, m)
	for i := c.k; i > 0; i-- {
		w := &c.words[p>>4]
		sh := (p & 15) * 4
		if *w>>sh&0xf < countingBloomMax {
			*w += unit << sh
		}
		p = bloomNext(p, d, m)
	}
}

// MayContain reports false only if key was definitely never added (or was
// removed as often as it was added).
func (c *CountingBloom) MayContain(key []byte) bool { return c.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash is h.
func (c *CountingBloom) MayContainHash(h uint64) bool {
	m := c.m
	p, d := bloomProbes(h, m)
	for i := c.k; i > 0; i-- {
		if c.words[p>>4]>>((p&15)*4)&0xf == 0 {
			return false
		}
		p = bloomNext(p, d, m)
	}
	return true
}

// Remove deletes one occurrence of key. If any of key's counters is zero the
// key was definitely never added: Remove then changes nothing and returns an
// error wrapping ErrNotMember. A key that is a false positive passes this
// check, and removing it can create false negatives for other keys, so only
// remove keys known to be members.
func (c *CountingBloom) Remove(key []byte) error {
	if err := c.RemoveHash(Hash(key)); err != nil {
		return fmt.Errorf("filters: CountingBloom.Remove(%q): %w", key, err)
	}
	return nil
}

// RemoveHash is Remove for a key whose Hash is h.
func (c *CountingBloom) RemoveHash(h uint64) error {
	if !c.MayContainHash(h) {
		return fmt.Errorf("hash %#016x: %w", h, ErrNotMember)
	}
	c.step(h, ^uint64(0)) // every counter is >= 1 here
	return nil
}

// Bits returns m, the number of counters (each 4 bits wide).
func (c *CountingBloom) Bits() uint64 { return c.m }

// FillRatio returns the fraction of counters that are non-zero: the analogue
// of a standard Bloom filter's set bits. 0 when empty, non-decreasing under Add.
func (c *CountingBloom) FillRatio() float64 {
	if c.m == 0 {
		return 0
	}
	n := 0
	for _, w := range c.words {
		// Fold each nibble onto its low bit, then count one bit per nibble.
		n += bits.OnesCount64((w | w>>1 | w>>2 | w>>3) & countingBloomNibbleLSB)
	}
	return float64(n) / float64(c.m)
}

// EstimatedFPRate returns FillRatio()^k, the probability that a never-added
// key finds all k of its counters non-zero in the filter as it is now.
func (c *CountingBloom) EstimatedFPRate() float64 {
	return math.Pow(c.FillRatio(), float64(c.k))
}

// MarshalBinary returns the filter's encoding (docs/format.md, "Counting Bloom").
func (c *CountingBloom) MarshalBinary() ([]byte, error) {
	if c.m == 0 {
		return nil, invalidf("filters: CountingBloom.MarshalBinary: zero-value filter")
	}
	nbytes := (c.m + 1) / 2
	w := bodyWriter{buf: slices.Grow([]byte(nil), 12+int(nbytes)+8)}
	c.writeShape(&w)
	for _, word := range c.words {
		w.u64(word)
	}
	// The words are little-endian, so their bytes are exactly the two-per-
	// byte layout; drop the padding past counter m-1 (always zero).
	w.buf = w.buf[:12+nbytes]
	return countingBloomCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces c with the filter encoded in data. On error c is
// unchanged and the error wraps ErrCorrupt.
func (c *CountingBloom) UnmarshalBinary(data []byte) error {
	return countingBloomCodec.unmarshal(c, data)
}

var countingBloomCodec = newCodec(TypeCountingBloom, countingBloomVersion, "counting bloom", decodeCountingBloom)

func decodeCountingBloom(r *bodyReader) (*CountingBloom, error) {
	s := readBloomShape(r, "counting bloom", "counter")
	if r.fail != nil {
		return nil, r.fail
	}
	raw := r.take((s.m+1)/2, "counting bloom counters")
	if err := r.finish(); err != nil {
		return nil, err
	}
	if !bloomIsPrime(s.m) {
		return nil, corruptf("counting bloom: counter count %d is not prime", s.m)
	}
	if s.m%2 == 1 && raw[len(raw)-1]>>4 != 0 {
		return nil, corruptf("counting bloom: counter past count %d is non-zero", s.m)
	}
	words := make([]uint64, (s.m+15)/16)
	var pad [8]byte
	for i := range words {
		chunk := raw[min(len(raw), 8*i):min(len(raw), 8*i+8)]
		copy(pad[:], chunk)
		clear(pad[len(chunk):])
		words[i] = binary.LittleEndian.Uint64(pad[:])
	}
	return &CountingBloom{words: words, bloomShape: s}, nil
}
