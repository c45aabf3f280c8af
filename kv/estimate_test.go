package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestEstimateDiskUsage: over a DB of evenly sized entries in one sorted
// level, the whole key space is exactly the tables' bytes, the first half
// about half of them, ten keys a block or two, a range past the keys
// nothing; for random a < b < c the estimate grows
// with the range and a split range covers at least the whole (each
// straddling table's edge block is counted on both sides). Bad bounds and
// a closed DB are errors.
func TestEstimateDiskUsage(t *testing.T) {
	d, err := Open(t.TempDir(), &Options{MemTableSize: 64 << 10, TargetFileSize: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.EstimateDiskUsage(nil, nil); err != nil || n != 0 {
		t.Fatalf("empty DB: %d, %v", n, err)
	}
	const n = 20000
	key := func(i int) []byte { return fmt.Appendf(nil, "k%06d", i) }
	val := make([]byte, 100)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, i := range rng.Perm(n) {
		for j := range val {
			val[j] = byte(rng.Uint32())
		}
		if err := d.Set(key(i), val, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil { // one sorted level
		t.Fatal(err)
	}
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, tb := range tables {
		sum += tb.Size
	}
	if all, err := d.EstimateDiskUsage(nil, nil); err != nil || all != sum {
		t.Fatalf("whole key space: %d, %v; the tables hold %d", all, err, sum)
	}
	if half, err := d.EstimateDiskUsage(nil, key(n/2)); err != nil || half < sum*45/100 || half > sum*55/100 {
		t.Fatalf("first half: %d of %d, %v", half, sum, err)
	}
	// Ten keys: at most the two edge blocks of the one or two tables
	// holding them, with their share of filter and index.
	if few, err := d.EstimateDiskUsage(key(1000), key(1010)); err != nil || few == 0 || few > 4*(4096+512) {
		t.Fatalf("ten keys: %d, %v", few, err)
	}
	if none, err := d.EstimateDiskUsage([]byte("z"), nil); err != nil || none != 0 {
		t.Fatalf("past the keys: %d, %v", none, err)
	}
	est := func(a, b []byte) uint64 {
		t.Helper()
		n, err := d.EstimateDiskUsage(a, b)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for range 200 {
		p := []int{rng.IntN(n + 10), rng.IntN(n + 10), rng.IntN(n + 10)}
		a, b, c := key(min(p[0], p[1], p[2])), key(p[0]+p[1]+p[2]-min(p[0], p[1], p[2])-max(p[0], p[1], p[2])), key(max(p[0], p[1], p[2]))
		ab, bc, ac := est(a, b), est(b, c), est(a, c)
		if ac < ab || ac < bc || ac > sum {
			t.Fatalf("[%s,%s) %d, [%s,%s) %d, [%s,%s) %d: not monotonic", a, b, ab, b, c, bc, a, c, ac)
		}
		if ab+bc+2 < ac { // each part rounds down by under a byte
			t.Fatalf("[%s,%s) %d + [%s,%s) %d < [%s,%s) %d", a, b, ab, b, c, bc, a, c, ac)
		}
	}
	if n, err := d.EstimateDiskUsage(key(5), key(5)); err != nil || n != 0 {
		t.Fatalf("empty range: %d, %v", n, err)
	}
	if _, err := d.EstimateDiskUsage(key(6), key(5)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("start after end: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.EstimateDiskUsage(nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed DB: %v", err)
	}
}
