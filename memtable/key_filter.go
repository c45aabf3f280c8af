package memtable

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// keyFilter is a memtable's Bloom filter of the user keys it holds (MT11),
// read with no lock: a Get of a key it rules out does not take the tree's
// RWMutex at all.
//
// Why it exists: Go's RWMutex parks a writer behind any reader that holds
// it and parks readers behind a waiting writer, so a reader that Gets in a
// loop (kvbench's while-writing readers, locked to their OS thread) and
// the one writer took turns sleeping: a Set beside such a reader cost
// 17-21 us against 1.6-1.9 us alone (kv's BenchmarkSetBesideGets). Most
// Gets in such a mix are of keys the memtable lacks (absent keys, or keys
// whose newest version sits in a table), and those now never meet the
// writer.
//
// Layout: one 64-bit word per key, chosen by the key's hash, with
// keyFilterProbes bits set in it, each at 6 bits of a remix of that hash
// (a register-blocked Bloom filter). At keyFilterBitsPerKey bits per key
// that is a 1.0% false-positive rate (1.9% at 10 bits; simulated, and
// TestKeyFilterHasEveryKey checks it), against about 0.8% for a standard
// Bloom filter of 12 bits; a false positive only costs the lock. One word
// per key keeps the writer's cost to one load and at most one atomic Or:
// a first version that spread 6 bits over a 512-bit block (one Or per
// word touched) made a memtable insert 21% dearer in the memtable's
// BenchmarkSet profile. Words are set with atomic Or and read with atomic
// Load, so readers and the writer need no other synchronisation (MT11
// gives the ordering).
type keyFilter struct {
	words    []atomic.Uint64
	capacity int // the keys it is sized for
}

const (
	keyFilterBitsPerKey = 12
	keyFilterProbes     = 5
	// keyFilterMinKeys sizes a memtable's first filter when nothing hints
	// at a better size: 4096 keys, 6 KiB.
	keyFilterMinKeys = 4096
	// keyFilterMaxHintKeys caps the first filter a hint (NewSized) asks
	// for: 16M keys, 24 MiB. A memtable that outgrows it doubles its
	// filter as keys arrive, and an absurd hint can neither allocate
	// terabytes nor overflow the word count.
	keyFilterMaxHintKeys = 1 << 24
)

// newKeyFilter returns an empty filter sized for keys keys.
func newKeyFilter(keys int) *keyFilter {
	keys = max(keys, keyFilterMinKeys)
	return &keyFilter{words: make([]atomic.Uint64, (keys*keyFilterBitsPerKey+63)/64), capacity: keys}
}

// keyHash is the hash the filter takes: xxhash of the user key, the same
// function as filters.Hash, so the engine's Get hashes a key once for the
// memtables and every table (GetHashed).
func keyHash(userKey []byte) uint64 { return xxhash.Sum64(userKey) }

// probe returns the word of hash h and the bits it sets there.
func (f *keyFilter) probe(h uint64) (word *atomic.Uint64, mask uint64) {
	i, _ := bits.Mul64(h, uint64(len(f.words)))
	// The multiplicative remix makes the bits' positions independent of
	// the word choice, which took h's high bits.
	r := h * 0x9e3779b97f4a7c15
	for range keyFilterProbes {
		mask |= 1 << (r >> 58)
		r <<= 6
	}
	return &f.words[i], mask
}

// add sets the bits of hash h. Only the memtable's writer calls it, under
// the write lock, before the entry enters the tree (MT11).
func (f *keyFilter) add(h uint64) {
	w, mask := f.probe(h)
	// A word that holds the bits already (a key written again) spares the
	// locked instruction.
	if w.Load()&mask != mask {
		w.Or(mask)
	}
}

// mayContain reports whether a key of hash h may have been added: false
// is certain for every add that returned before this call began.
func (f *keyFilter) mayContain(h uint64) bool {
	w, mask := f.probe(h)
	return w.Load()&mask == mask
}

// bytes is the filter's memory, counted in ApproximateSize (MT4).
func (f *keyFilter) bytes() int64 {
	return int64(len(f.words)) * int64(unsafe.Sizeof(atomic.Uint64{}))
}

// addToFilter sets userKey's bits before its entry enters the tree, first
// replacing the filter with one twice the size if this Add would take it
// past its capacity (its false-positive rate climbs fast beyond). The
// new filter is filled from the tree, which holds every key added so far,
// and published before the new key's bits go into it, so every filter a
// reader can load from then on holds every key of the tree. REQUIRES:
// m.mu held for writing.
func (m *MemTable) addToFilter(userKey []byte) {
	f := m.filter.Load()
	if m.filterKeys >= f.capacity {
		bigger := newKeyFilter(2 * max(m.filterKeys, f.capacity))
		m.tree.Ascend(func(it item) bool {
			bigger.add(keyHash(m.arena.key(it).UserKey))
			return true
		})
		m.filter.Store(bigger)
		m.size.Add(bigger.bytes() - f.bytes())
		f = bigger
	}
	f.add(keyHash(userKey))
	m.filterKeys++
}
