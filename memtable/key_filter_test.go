package memtable

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/base"
)

// TestAbsentKeyGetTakesNoLock checks MT11's point: while the writer holds
// the lock, a Get of a key the memtable lacks returns, and one of a key it
// holds waits for the lock as before.
func TestAbsentKeyGetTakesNoLock(t *testing.T) {
	m := New()
	m.Set([]byte("present"), 1, []byte("v"))
	m.mu.Lock()
	absent := make(chan bool)
	go func() {
		_, _, found := m.Get([]byte("absent"), base.SeqNumMax)
		absent <- found
	}()
	select {
	case found := <-absent:
		if found {
			t.Fatal("absent key found")
		}
	case <-time.After(10 * time.Second):
		m.mu.Unlock()
		t.Fatal("a Get of an absent key waited for the write lock")
	}
	present := make(chan bool)
	go func() {
		_, _, found := m.Get([]byte("present"), base.SeqNumMax)
		present <- found
	}()
	select {
	case <-present:
		t.Fatal("a Get of a present key answered while the writer held the lock")
	case <-time.After(20 * time.Millisecond):
	}
	m.mu.Unlock()
	if !<-present {
		t.Fatal("present key not found")
	}
}

// TestKeyFilterHasEveryKey checks MT11's guarantee over random keys and
// sizes, through the rebuilds of a memtable started far too small: every
// key added is one the filter may contain, and keys never added pass at
// about the rate the layout promises (1.0% at 12 bits per key, its
// worst, just below a rebuild).
func TestKeyFilterHasEveryKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for round := range 20 {
		n := 1 + rng.IntN(40000)
		m := NewSized(nil, rng.IntN(2*keyFilterMinKeys))
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = make([]byte, 1+rng.IntN(24))
			for j := range keys[i] {
				keys[i][j] = byte(rng.Uint32())
			}
			m.Set(keys[i], base.SeqNum(i+1), nil)
		}
		f := m.filter.Load()
		for i, k := range keys {
			if !f.mayContain(keyHash(k)) {
				t.Fatalf("round %d: key %d of %d missing from the filter (capacity %d)", round, i, n, f.capacity)
			}
		}
		if n < 10000 {
			continue
		}
		fp, probes := 0, 100000
		for range probes {
			var k [32]byte // 32 bytes: longer than any key added
			binary.LittleEndian.PutUint64(k[:], rng.Uint64())
			if f.mayContain(keyHash(k[:])) {
				fp++
			}
		}
		if rate, load := float64(fp)/float64(probes), float64(n)/float64(f.capacity); rate > 0.016 {
			t.Errorf("round %d: false-positive rate %.4f at %d keys in a filter for %d (load %.2f)", round, rate, n, f.capacity, load)
		}
	}
}

// TestKeyFilterConcurrentNoFalseMiss checks MT11 under -race: readers Get
// keys the writer has acknowledged (published through an atomic, as the
// engine publishes its visible sequence number) while the writer adds
// more, through every rebuild from the smallest filter up, and none may
// be missed.
func TestKeyFilterConcurrentNoFalseMiss(t *testing.T) {
	m := NewSized(nil, 0)
	const writes = 40000
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%07d", i)) }
	var acked atomic.Int64
	readWhileWriting(t, 2, 13, func(_ int, rng *rand.Rand) error {
		n := acked.Load()
		if n == 0 {
			return nil
		}
		i := rng.IntN(int(n))
		if _, _, found := m.Get(key(i), base.SeqNumMax); !found {
			return fmt.Errorf("key %d missed with %d acknowledged", i, n)
		}
		return nil
	}, func() {
		for i := range writes {
			m.Set(key(i), base.SeqNum(i+1), nil)
			acked.Store(int64(i + 1))
		}
	})
	if c := m.filter.Load().capacity; c < writes {
		t.Fatalf("filter capacity %d after %d writes: it never grew", c, writes)
	}
}

// TestSizedFilterDoesNotRebuild checks NewSized's promise: a memtable
// given its expected entries keeps its first filter through them, and
// its ApproximateSize counts the filter from the start (MT4).
func TestSizedFilterDoesNotRebuild(t *testing.T) {
	const n = 20000
	m := NewSized(nil, n)
	first := m.filter.Load()
	if m.ApproximateSize() != first.bytes() || first.bytes() < n*keyFilterBitsPerKey/8 {
		t.Fatalf("empty memtable charged %d B, filter %d B for %d keys", m.ApproximateSize(), first.bytes(), n)
	}
	for i := range n {
		m.Set([]byte(fmt.Sprintf("k%06d", i)), 1, nil)
	}
	if m.filter.Load() != first {
		t.Fatal("a filter sized for the entries was rebuilt")
	}
}
