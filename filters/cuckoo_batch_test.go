package filters

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// cuckooTwins returns two empty filters of the same shape for n keys.
func cuckooTwins(t *testing.T, n int, fpRate float64) (*Cuckoo, *Cuckoo) {
	t.Helper()
	a, err := NewCuckoo(n, fpRate)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewCuckoo(n, fpRate)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// sameCuckoo fails t unless a and b hold the same table, count and walk
// state: the same filter, byte for byte.
func sameCuckoo(t *testing.T, what string, a, b *Cuckoo) {
	t.Helper()
	if a.count != b.count || a.rng != b.rng || !slices.Equal(a.slots.words, b.slots.words) {
		t.Fatalf("%s: batch and one-by-one differ (counts %d and %d)", what, a.count, b.count)
	}
}

// TestCuckooBatchMatchesOneByOne: AddHashes and RemoveHashes leave exactly
// the filter that CopiesHash + AddHash and RemoveHash one by one leave, for
// random batches with many repeats (so the copy bound spills), at every
// fingerprint width, on a table small enough to stay cached and on one
// large enough for the batch to load ahead; the spilled hashes are the
// ones one by one would have refused, and every member stays a member.
func TestCuckooBatchMatchesOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 8))
	for _, shape := range []struct {
		n       int
		fpRate  float64
		batches int
	}{
		{3000, 0.03, 12}, {3000, 0.004, 12}, {3000, 0.0003, 12},
		{800_000, 0.004, 3}, // 1.5 MB: loadsAhead
	} {
		batched, one := cuckooTwins(t, shape.n, shape.fpRate)
		if shape.n > 100_000 && !batched.loadsAhead() {
			t.Fatalf("a %d-byte table does not load ahead", 8*len(batched.slots.words))
		}
		var members []uint64
		for round := 0; round < shape.batches; round++ {
			hs := make([]uint64, 1+rng.IntN(shape.n/8))
			for i := range hs {
				hs[i] = rng.Uint64()
				if len(members) > 0 && rng.IntN(4) == 0 {
					hs[i] = members[rng.IntN(len(members))]
				}
			}
			var wantSpill []uint64
			for _, h := range hs {
				if one.CopiesHash(h) >= tombstoneLikeMaxCopies {
					wantSpill = append(wantSpill, h)
					continue
				}
				if err := one.AddHash(h); err != nil {
					t.Fatalf("one by one: %v", err)
				}
				members = append(members, h)
			}
			spill, n, err := batched.AddHashes(slices.Clone(hs), tombstoneLikeMaxCopies, nil)
			if err != nil || n != len(hs) {
				t.Fatalf("AddHashes: %d of %d, %v", n, len(hs), err)
			}
			if !slices.Equal(spill, wantSpill) {
				t.Fatalf("spilled %d hashes, one by one refused %d", len(spill), len(wantSpill))
			}
			sameCuckoo(t, "after adds", batched, one)
			// Remove a random subset of the members, in random order.
			rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
			drop := members[:rng.IntN(len(members)/2+1)]
			for _, h := range drop {
				if !one.RemoveHash(h) {
					t.Fatalf("member %#x not removed one by one", h)
				}
			}
			if got := batched.RemoveHashes(slices.Clone(drop)); got != len(drop) {
				t.Fatalf("RemoveHashes found %d of %d members", got, len(drop))
			}
			members = members[len(drop):]
			sameCuckoo(t, "after removes", batched, one)
			for _, h := range members {
				if !batched.MayContainHash(h) {
					t.Fatalf("member %#x missing after a batch (F1)", h)
				}
			}
		}
	}
}

// tombstoneLikeMaxCopies is the copy bound the tests batch with: sievekv's
// tombstone index keeps two copies per alias class.
const tombstoneLikeMaxCopies = 2

// TestCuckooBatchFullChangesNothing: a batch that meets a full filter
// stops at the hash one by one would fail on, reports it, and leaves the
// filter as one by one left it up to there: the failed add changed
// nothing (F2).
func TestCuckooBatchFullChangesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 9))
	batched, one := cuckooTwins(t, 500, 0.004)
	hs := make([]uint64, 4*one.Cap())
	for i := range hs {
		hs[i] = rng.Uint64()
	}
	failAt := -1
	for i, h := range hs {
		if err := one.AddHash(h); err != nil {
			if !errors.Is(err, ErrFull) {
				t.Fatal(err)
			}
			failAt = i
			break
		}
	}
	if failAt < 0 {
		t.Fatal("one by one never filled up")
	}
	_, n, err := batched.AddHashes(hs, 0, nil)
	if !errors.Is(err, ErrFull) || n != failAt {
		t.Fatalf("AddHashes stopped at %d with %v; one by one failed at %d", n, err, failAt)
	}
	sameCuckoo(t, "after the failed batch", batched, one)
	for _, h := range hs[:n] {
		if !batched.MayContainHash(h) {
			t.Fatalf("member %#x lost by the failed batch", h)
		}
	}
}

// FuzzCuckooBatch drives AddHashes and RemoveHashes with arbitrary hashes
// (repeats and shared buckets included) against one-by-one calls on a
// small filter that fills up: the two must stay the same filter.
func FuzzCuckooBatch(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, maxCopies uint8) {
		batched, one := cuckooTwins(t, 64, 0.03)
		var hs []uint64
		for len(data) >= 3 {
			// Few distinct values, so that buckets and fingerprints collide.
			hs = append(hs, uint64(data[0]&0x3f)|uint64(data[1])<<32|uint64(data[2]&7)<<56)
			data = data[3:]
		}
		bound := int(maxCopies % 9)
		var added []uint64
		failed := -1
		for i, h := range hs {
			if bound > 0 && one.CopiesHash(h) >= bound {
				continue
			}
			if one.AddHash(h) != nil {
				failed = i
				break
			}
			added = append(added, h)
		}
		_, n, err := batched.AddHashes(slices.Clone(hs), bound, nil)
		if (failed >= 0) != (err != nil) || (failed >= 0 && n != failed) {
			t.Fatalf("batch stopped at %d (%v), one by one at %d", n, err, failed)
		}
		sameCuckoo(t, "adds", batched, one)
		for _, h := range added {
			one.RemoveHash(h)
		}
		batched.RemoveHashes(added)
		sameCuckoo(t, "removes", batched, one)
		if batched.Len() != 0 {
			t.Fatalf("%d fingerprints left after removing every member", batched.Len())
		}
	})
}
