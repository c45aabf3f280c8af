package base

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCompareOrder checks B1 on hand-picked pairs.
func TestCompareOrder(t *testing.T) {
	ordered := []InternalKey{
		MakeInternalKey(nil, SeqNumMax, KindSet),
		MakeInternalKey(nil, 0, KindDelete),
		MakeInternalKey([]byte{0}, 7, KindSet),
		MakeInternalKey([]byte{0}, 7, KindDelete),
		MakeInternalKey([]byte{0}, 6, KindSet),
		MakeInternalKey([]byte("a"), 100, KindDelete),
		MakeInternalKey([]byte("a"), 3, KindSet),
		MakeInternalKey([]byte("a\x00"), SeqNumMax, KindSet),
		MakeInternalKey([]byte("b"), 1, KindSet),
		MakeInternalKey([]byte{0xff, 0xff}, 1, KindSet),
	}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := Compare(ordered[i], ordered[j]); got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

// TestEncodeRoundTrip checks B2 on random keys.
func TestEncodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		uk := make([]byte, rng.IntN(20))
		for i := range uk {
			uk[i] = byte(rng.IntN(4)) * 0x55
		}
		k := MakeInternalKey(uk, SeqNum(rng.Uint64N(uint64(SeqNumMax)+1)), Kind(rng.IntN(2)))
		enc := k.Encode(nil)
		if len(enc) != k.Size() {
			t.Fatalf("size %d != %d", len(enc), k.Size())
		}
		d, ok := DecodeInternalKey(enc)
		if !ok || Compare(d, k) != 0 || d.SeqNum() != k.SeqNum() || d.Kind() != k.Kind() {
			t.Fatalf("round trip of %v gave %v", k, d)
		}
	}
	if _, ok := DecodeInternalKey(make([]byte, 7)); ok {
		t.Fatal("decoded a 7-byte key")
	}
}

// TestCompareIsTotalOrder sorts random keys with Compare and checks the
// result against an independent definition of B1.
func TestCompareIsTotalOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([]InternalKey, 5000)
	for i := range keys {
		uk := make([]byte, rng.IntN(3))
		for j := range uk {
			uk[j] = byte(rng.IntN(3)) * 0x7f
		}
		keys[i] = MakeInternalKey(uk, SeqNum(rng.IntN(5)), Kind(rng.IntN(2)))
	}
	slices.SortFunc(keys, Compare)
	for i := 1; i < len(keys); i++ {
		a, b := keys[i-1], keys[i]
		c := bytes.Compare(a.UserKey, b.UserKey)
		if c > 0 || (c == 0 && (a.SeqNum() < b.SeqNum() || (a.SeqNum() == b.SeqNum() && a.Kind() < b.Kind()))) {
			t.Fatalf("out of order: %v before %v", a, b)
		}
	}
}

// TestSearchKeyFindsNewestVisible checks B3: SeekGE(MakeSearchKey(k, r))
// over a sorted slice lands on the newest version with seq <= r.
func TestSearchKeyFindsNewestVisible(t *testing.T) {
	var keys []InternalKey
	for _, s := range []SeqNum{9, 5, 5, 2} {
		kind := KindSet
		if len(keys) == 2 {
			kind = KindDelete
		}
		keys = append(keys, MakeInternalKey([]byte("k"), s, kind))
	}
	for r := SeqNum(0); r < 12; r++ {
		i, _ := slices.BinarySearchFunc(keys, MakeSearchKey([]byte("k"), r), Compare)
		var want = -1
		for j, k := range keys {
			if Visible(k.SeqNum(), r) {
				want = j
				break
			}
		}
		if want == -1 {
			want = len(keys)
		}
		if i != want {
			t.Fatalf("snapshot %d: landed on %d, want %d", r, i, want)
		}
	}
}

func TestCorruptionErrorf(t *testing.T) {
	inner := errors.New("inner")
	err := CorruptionErrorf("sstable: %s: block at offset %d: %w", "000001.sst", 4096, inner)
	if !errors.Is(err, ErrCorruption) || !errors.Is(err, inner) || !IsCorruption(err) {
		t.Fatalf("%v does not wrap both sentinels", err)
	}
	if got, want := err.Error(), "sstable: 000001.sst: block at offset 4096: inner"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("kv: get: %w", err)
	if !errors.Is(wrapped, ErrCorruption) {
		t.Fatal("wrapping lost the class")
	}
	if errors.Is(errors.New("x"), ErrCorruption) {
		t.Fatal("plain error matched")
	}
}

// TestKindString pins the kinds' names, which messages and tests print.
func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindDelete: "DEL", KindSet: "SET", KindRangeDelete: "RANGEDEL", 3: "KIND(3)", 255: "KIND(255)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind %d: %q, want %q", uint8(k), got, want)
		}
	}
}

// TestUserKeyPrefixOrder checks the property the memtable's B-tree (MT6)
// and a table's index search rely on: when two keys' prefixes differ,
// they order the keys as bytes.Compare does. Keys are short and rich in zero bytes, where the
// zero padding could mislead.
func TestUserKeyPrefixOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	key := func() []byte {
		k := make([]byte, rng.IntN(12))
		for i := range k {
			k[i] = []byte{0, 1, 0xff}[rng.IntN(3)]
		}
		return k
	}
	for range 200000 {
		a, b := key(), key()
		pa, pb := UserKeyPrefix(a), UserKeyPrefix(b)
		if pa != pb && (pa < pb) != (bytes.Compare(a, b) < 0) {
			t.Fatalf("prefixes of %x and %x order them wrongly", a, b)
		}
		if bytes.Equal(a, b) && pa != pb {
			t.Fatalf("equal keys %x with different prefixes", a)
		}
	}
}
