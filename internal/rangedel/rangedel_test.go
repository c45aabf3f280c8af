package rangedel

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

func randomTombstones(r *rand.Rand, n int) []Tombstone {
	key := func() []byte { return []byte{byte('a' + r.IntN(12))} }
	ts := make([]Tombstone, 0, n)
	for len(ts) < n {
		s, e := key(), key()
		if r.IntN(4) == 0 {
			e = append(bytes.Clone(s), byte('a'+r.IntN(3)))
		}
		if bytes.Compare(s, e) >= 0 {
			continue
		}
		ts = append(ts, Tombstone{Start: s, End: e, Seq: base.SeqNum(1 + r.IntN(40))})
	}
	return ts
}

// naiveCover is R3's Cover computed from the definition (R1).
func naiveCover(ts []Tombstone, key []byte, readSeq base.SeqNum) base.SeqNum {
	var best base.SeqNum
	for _, t := range ts {
		if t.Seq <= readSeq && t.Seq > best && t.Covers(key, 0) {
			best = t.Seq
		}
	}
	return best
}

// naiveCoverAbove is CoverAbove from the definition.
func naiveCoverAbove(ts []Tombstone, key []byte, seq base.SeqNum) base.SeqNum {
	var best base.SeqNum
	for _, t := range ts {
		if t.Covers(key, seq) && (best == 0 || t.Seq < best) {
			best = t.Seq
		}
	}
	return best
}

// TestSetCoverMatchesDefinition: for random overlapping tombstones the
// fragmented Set answers every key and read sequence number as the
// definition does.
func TestSetCoverMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		ts := randomTombstones(r, r.IntN(12))
		s := NewSet(ts)
		if s.Len() != len(ts) {
			t.Fatalf("Len = %d, want %d", s.Len(), len(ts))
		}
		for i := 1; i < len(s.bounds); i++ {
			if bytes.Compare(s.bounds[i-1], s.bounds[i]) >= 0 {
				t.Fatalf("round %d: fragment boundaries %d and %d out of order (R3)", round, i-1, i)
			}
		}
		for c := byte('a' - 1); c <= 'm'; c++ {
			for _, key := range [][]byte{{c}, {c, 'a'}, {c, 'b', 'z'}} {
				for _, rs := range []base.SeqNum{0, 1, 5, 20, 39, 40, base.SeqNumMax} {
					if got, want := s.Cover(key, rs), naiveCover(ts, key, rs); got != want {
						t.Fatalf("round %d: Cover(%q, %d) = %d, want %d; tombstones %v", round, key, rs, got, want, ts)
					}
					if got, want := s.CoverAbove(key, rs), naiveCoverAbove(ts, key, rs); got != want {
						t.Fatalf("round %d: CoverAbove(%q, %d) = %d, want %d; tombstones %v", round, key, rs, got, want, ts)
					}
				}
			}
		}
	}
	var empty *Set
	if !empty.Empty() || empty.Cover([]byte("a"), base.SeqNumMax) != 0 {
		t.Fatal("a nil Set must be empty")
	}
}

// TestBlockRoundTrip: Decode(Encode(ts)) gives ts back in Compare order,
// and the encoding is canonical (R2).
func TestBlockRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		ts := randomTombstones(r, r.IntN(10))
		// Distinct under Compare, as a table holds them.
		seen := map[string]bool{}
		uniq := ts[:0]
		for _, x := range ts {
			k := x.String()
			if !seen[k] {
				seen[k] = true
				uniq = append(uniq, x)
			}
		}
		enc := Encode(nil, uniq)
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(%v)): %v", uniq, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(uniq) {
			t.Fatalf("round trip: got %v, want %v", got, uniq)
		}
		if again := Encode(nil, got); !bytes.Equal(again, enc) {
			t.Fatalf("re-encoding differs")
		}
	}
}

// TestBlockGolden pins the block bytes of docs/format.md's worked example.
func TestBlockGolden(t *testing.T) {
	ts := []Tombstone{
		{Start: []byte("m"), End: []byte("p"), Seq: 7},
		{Start: []byte("c"), End: []byte("f"), Seq: 300},
	}
	const want = "02" + "0163" + "0166" + "ac02" + "016d" + "0170" + "07"
	if got := hex.EncodeToString(Encode(nil, ts)); got != want {
		t.Fatalf("Encode = %s, want %s", got, want)
	}
}

// TestDecodeRejects names each malformation Decode must refuse (R2).
func TestDecodeRejects(t *testing.T) {
	for _, c := range []struct{ name, hex string }{
		{"empty", ""},
		{"count beyond bytes", "05" + "0161016207"},
		{"start overruns", "01" + "0561"},
		{"empty range", "01" + "0161" + "0161" + "07"},
		{"reversed range", "01" + "0162" + "0161" + "07"},
		{"seqnum zero", "01" + "0161" + "0162" + "00"},
		{"seqnum too large", "01" + "0161" + "0162" + "ffffffffffffffff7f"},
		{"out of order", "02" + "0162016307" + "0161016307"},
		{"duplicate", "02" + "0161016207" + "0161016207"},
		{"non-minimal varint", "8100" + "0161016207"},
		{"trailing bytes", "01" + "0161016207" + "00"},
	} {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); !base.IsCorruption(err) {
			t.Errorf("%s: Decode = %v, want a corruption error", c.name, err)
		}
	}
}

// FuzzDecode: no input makes Decode panic, and whatever it accepts
// re-encodes to the same bytes (R2) and fragments without panicking.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(nil, []Tombstone{{Start: []byte("a"), End: []byte("c"), Seq: 3}, {Start: []byte("b"), End: []byte("d"), Seq: 9}}))
	f.Add([]byte{0})
	f.Add([]byte{1, 1, 'a', 1, 'b', 7})
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := Decode(b)
		if err != nil {
			if !base.IsCorruption(err) {
				t.Fatalf("error %v is not a corruption error", err)
			}
			return
		}
		if again := Encode(nil, append([]Tombstone(nil), ts...)); !bytes.Equal(again, b) {
			t.Fatalf("accepted a non-canonical block: %x re-encodes to %x", b, again)
		}
		s := NewSet(ts)
		for _, x := range ts {
			if s.Cover(x.Start, base.SeqNumMax) < x.Seq {
				t.Fatalf("%v does not cover its own start", x)
			}
		}
	})
}

// TestDecodeShortestTombstones: a tombstone can take 4 bytes (an empty
// start, a one-byte end, a one-byte sequence number), as DeleteRange from
// the empty key writes early in a DB's life; Decode's bound on the count
// must admit blocks of them.
func TestDecodeShortestTombstones(t *testing.T) {
	for _, ts := range [][]Tombstone{
		{{Start: []byte{}, End: []byte{0}, Seq: 1}, {Start: []byte{}, End: []byte{0}, Seq: 2}, {Start: []byte{}, End: []byte{0}, Seq: 3}},
		{{Start: []byte{}, End: []byte("a"), Seq: 1}, {Start: []byte("a"), End: []byte("b"), Seq: 2}, {Start: []byte("b"), End: []byte("c"), Seq: 3}},
	} {
		ts = slices.Clone(ts)
		enc := Encode(nil, ts) // sorts ts
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(%v)) = %v", ts, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(ts) {
			t.Fatalf("round trip: got %v, want %v", got, ts)
		}
	}
}
