package filters_test

import (
	"errors"
	"fmt"

	"github.com/sievekv/sievekv/filters"
)

// Sized for n keys at a target false-positive rate, a Bloom filter answers
// "definitely not added" or "maybe added".
func ExampleNewBloom() {
	bf, err := filters.NewBloom(1000, 0.01)
	if err != nil {
		panic(err)
	}
	bf.Add([]byte("apple"))
	fmt.Println(bf.MayContain([]byte("apple")))
	fmt.Println(bf.MayContain([]byte("a key never added")))
	// Output:
	// true
	// false
}

// A blocked Bloom filter touches one cache line per query: its bits are
// whole 512-bit blocks, and all k probes of a key fall in one of them.
func ExampleNewBlockedBloom() {
	bf, _ := filters.NewBlockedBloom(1000, 0.01)
	bf.Add([]byte("apple"))
	fmt.Println(bf.MayContain([]byte("apple")), bf.Bits()/512, "blocks,", bf.K(), "probes")
	// Output: true 20 blocks, 6 probes
}

// A counting Bloom filter supports removal of keys that were added.
func ExampleNewCountingBloom() {
	cb, _ := filters.NewCountingBloom(1000, 0.01)
	cb.Add([]byte("session-42"))
	fmt.Println(cb.MayContain([]byte("session-42")))
	if err := cb.Remove([]byte("session-42")); err != nil {
		panic(err)
	}
	fmt.Println(cb.MayContain([]byte("session-42")))
	// Output:
	// true
	// false
}

// A scalable Bloom filter grows as keys arrive, keeping its overall
// false-positive rate.
func ExampleNewScalableBloom() {
	sb, _ := filters.NewScalableBloom(100, 0.01)
	for i := 0; i < 10000; i++ {
		sb.Add([]byte(fmt.Sprint("user", i)))
	}
	fmt.Println(sb.MayContain([]byte("user9999")))
	// Output: true
}

// Static filters are built once from the full key set: binary fuse is the
// smallest and fastest of the 8-bit ones.
func ExampleBuildBinaryFuse8() {
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	f, err := filters.BuildBinaryFuse8(keys)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Len(), f.MayContain([]byte("b")))
	// Output: 3 true
}

// The general binary fuse filter takes the arity and fingerprint width.
func ExampleBuildBinaryFuse() {
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	f, _ := filters.BuildBinaryFuse(keys, filters.FuseOptions{Arity: 4, FingerprintBits: 10})
	fmt.Println(f.MayContain([]byte("c")))
	// Output: true
}

func ExampleBuildXor8() {
	f, _ := filters.BuildXor8([][]byte{[]byte("x"), []byte("y")})
	fmt.Println(f.MayContain([]byte("x")))
	// Output: true
}

// Ribbon solves a banded linear system: close to the space bound for any
// false-positive rate 2^-ResultBits.
func ExampleBuildRibbon() {
	keys := make([][]byte, 500)
	for i := range keys {
		keys[i] = []byte(fmt.Sprint("k", i))
	}
	f, err := filters.BuildRibbon(keys, filters.RibbonOptions{ResultBits: 7})
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Len(), f.MayContain([]byte("k499")))
	// Output: 500 true
}

// A cuckoo filter supports Add and Remove; a full filter reports ErrFull
// and is left unchanged.
func ExampleNewCuckoo() {
	c, _ := filters.NewCuckoo(1000, 0.004)
	if err := c.Add([]byte("tombstone")); err != nil {
		panic(err)
	}
	fmt.Println(c.MayContain([]byte("tombstone")))
	c.Remove([]byte("tombstone")) // only remove keys known to be members
	fmt.Println(c.MayContain([]byte("tombstone")))
	// Output:
	// true
	// false
}

func ExampleNewQuotient() {
	q, _ := filters.NewQuotient(1000, 0.01)
	q.Add([]byte("k"))
	fmt.Println(q.MayContain([]byte("k")), q.Len())
	// Output: true 1
}

// The counting quotient filter counts multiplicities.
func ExampleNewCountingQuotient() {
	q, _ := filters.NewCountingQuotient(1000, 0.01)
	for i := 0; i < 3; i++ {
		q.Add([]byte("hot"))
	}
	fmt.Println(q.Count([]byte("hot")) >= 3)
	// Output: true
}

// A vector quotient filter picks its tag width from the false-positive
// rate: 8 bits where they reach it (0.42% at the sizing load), else 16.
func ExampleNewVectorQuotient() {
	for _, fpRate := range []float64{0.01, 0.0001} {
		q, _ := filters.NewVectorQuotient(1000, fpRate)
		if err := q.Add([]byte("k")); err != nil {
			panic(err)
		}
		fmt.Println(fpRate, q.TagBits(), q.MayContain([]byte("k")))
	}
	// Output:
	// 0.01 8 true
	// 0.0001 16 true
}

// A Morton filter is a cuckoo filter compressed into 64-byte blocks whose
// buckets share their slots, so it is sized for n keys at a load of 0.95.
func ExampleNewMorton() {
	m, _ := filters.NewMorton(1000, 0.01)
	for i := 0; i < 1000; i++ {
		if err := m.Add([]byte(fmt.Sprint("k", i))); err != nil {
			panic(err)
		}
	}
	fmt.Printf("%d keys, load %.2f\n", m.Len(), m.LoadFactor())
	// Output: 1000 keys, load 0.95
}

// A vacuum filter keeps both buckets of a key in one chunk of
// ChunkBuckets buckets, so its table need not be a power of two; like a
// cuckoo filter it takes Remove for a key that was added.
func ExampleNewVacuum() {
	v, _ := filters.NewVacuum(1000, 0.01)
	v.Add([]byte("k"))
	fmt.Println(v.ChunkBuckets(), v.MayContain([]byte("k")), v.Remove([]byte("k")))
	fmt.Println(v.MayContain([]byte("k")))
	// Output:
	// 128 true true
	// false
}

// Every filter encodes itself in a versioned, checksummed envelope that
// Unmarshal decodes; damaged bytes give an error wrapping ErrCorrupt.
func ExampleUnmarshal() {
	f, _ := filters.BuildBinaryFuse8([][]byte{[]byte("a")})
	enc, _ := f.MarshalBinary()
	g, err := filters.Unmarshal(enc)
	fmt.Println(err, g.MayContain([]byte("a")))

	enc[len(enc)/2] ^= 0xff
	_, err = filters.Unmarshal(enc)
	fmt.Println(errors.Is(err, filters.ErrCorrupt))
	// Output:
	// <nil> true
	// true
}
