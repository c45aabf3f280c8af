package kv

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestOneBatchAppliedTwiceAtOnce: the commit stamps a batch's sequence
// number into the batch itself, so one Batch applied from two goroutines
// at once had one commit's entries written under the other's numbers.
// On two DBs an acknowledged write went into the second DB above its
// visible sequence number (Get: not found); on one DB the WAL held two
// records with the same numbers, which Check calls corruption. Apply now
// refuses the second with ErrInvalidArgument; every Apply that returns nil
// is readable, and the one DB's Check is clean.
func TestOneBatchAppliedTwiceAtOnce(t *testing.T) {
	fs := vfs.NewMem()
	d1 := openMem(t, fs, &Options{DisableAutomaticCompactions: true})
	d2, err := Open("other", &Options{FS: fs, DisableAutomaticCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 { // d1's sequence numbers far above d2's
		if err := d1.Set(fmt.Appendf(nil, "fill%d", i), nil, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	refused := 0
	for i := range 300 {
		b := d1.NewBatch()
		key := fmt.Appendf(nil, "k%04d", i)
		b.Set(key, []byte("v"))
		var wg sync.WaitGroup
		errs := [3]error{}
		for j, db := range []*DB{d1, d2, d1} {
			wg.Go(func() { errs[j] = db.Apply(b, NoSync) })
		}
		wg.Wait()
		for j, db := range []*DB{d1, d2, d1} {
			switch err := errs[j]; {
			case errors.Is(err, ErrInvalidArgument):
				refused++
			case err != nil:
				t.Fatalf("Apply %d of batch %d: %v", j, i, err)
			default:
				if v, err := db.Get(key); err != nil || string(v) != "v" {
					t.Fatalf("batch %d, acknowledged by Apply %d: Get = %q, %v", i, j, v, err)
				}
			}
		}
	}
	t.Logf("%d of 900 Applies refused as concurrent", refused)
	for _, db := range []*DB{d1, d2} {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"db", "other"} {
		rep, err := Check(dir, &Options{FS: fs})
		if err != nil {
			t.Fatalf("Check %s: %v", dir, err)
		}
		if !rep.OK() {
			t.Fatalf("Check %s found problems:\n%v", dir, rep)
		}
	}
}
