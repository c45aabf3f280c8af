package kv

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// parseFileName accepts exactly the names fileName writes: a round trip
// for random numbers across the whole range, and every other spelling of
// the same numbers refused.
func TestParseFileNameIsExactInverse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []fileKind{fileKindLog, fileKindTable, fileKindManifest, fileKindTemp}
	for i := 0; i < 2000; i++ {
		num := fileNum(1 + rng.Uint64N(uint64(maxFileNum)))
		if i%2 == 0 {
			num = fileNum(1 + rng.Uint64N(2_000_000)) // around the padding width
		}
		kind := kinds[i%len(kinds)]
		k, n, ok := parseFileName(fileName(kind, num))
		if !ok || k != kind || n != num {
			t.Fatalf("parseFileName(%q) = %v, %d, %v", fileName(kind, num), k, n, ok)
		}
	}
	for _, name := range []string{
		"5000.log", "0000001.log", "7.log", "0000000000007.sst", "000000.log",
		"MANIFEST-1", "MANIFEST-0000001", "MANIFEST-000000", "+00001.log",
		"000001.LOG", "000001.log.bak", "000001", "18446744073709551613.tmp",
		"281474976710656.sst", // maxFileNum + 1
		"CURRENT.tmp", "LOCK2", "",
	} {
		if k, n, ok := parseFileName(name); ok {
			t.Errorf("parseFileName(%q) = %v, %d, true; want not the engine's", name, k, n)
		}
	}
}

// Once the counter reaches the end of the range, the write that needs a
// file number fails with ErrFileNumbersExhausted instead of wrapping to
// numbers that live files hold; what was acknowledged stays readable.
func TestAllocFileNumExhaustedIsAnError(t *testing.T) {
	d, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
		t.Fatal(err)
	}
	// No number left. Flush needs one for its table, and one for the new
	// WAL unless the WAL prepared ahead (wal_prepare.go) is ready.
	d.manifest.nextFileNum.Store(uint64(maxFileNum) + 1)
	err = d.Flush()
	if !errors.Is(err, ErrFileNumbersExhausted) {
		t.Fatalf("Flush with the counter at its end = %v, want ErrFileNumbersExhausted", err)
	}
	if n := d.manifest.nextFileNum.Load(); n != uint64(maxFileNum)+1 {
		t.Fatalf("counter = %d after exhaustion, want it to stay at %d", n, uint64(maxFileNum)+1)
	}
	if v, err := d.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("Get after exhaustion = %q, %v", v, err)
	}
}
