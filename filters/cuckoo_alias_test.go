package filters

import (
	"math/rand/v2"
	"testing"
)

// TestCuckooCopiesCountTheAliasClass: CopiesHash counts exactly the copies
// added for a key and for every key of its alias class, and AliasHash is
// the same for two keys exactly when one's copies are visible to the other.
func TestCuckooCopiesCountTheAliasClass(t *testing.T) {
	c, err := NewCuckoo(4096, 0.004)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	h := rng.Uint64()
	for want := 1; want <= 8; want++ {
		if err := c.AddHash(h); err != nil {
			t.Fatalf("copy %d: %v", want, err)
		}
		if got := c.CopiesHash(h); got != want {
			t.Fatalf("after %d adds CopiesHash = %d", want, got)
		}
	}
	if err := c.AddHash(h); err == nil {
		t.Fatal("a ninth copy of one fingerprint fit in a bucket pair of 8 slots")
	}
	// A key of the same class (same fingerprint bits, same first bucket)
	// sees the same copies; its partner bucket as first bucket too.
	fp, i1 := c.derive(h)
	twin := h&^c.altMask | c.alt(i1, fp) // altMask is the bucket mask
	if c.AliasHash(twin) != c.AliasHash(h) || c.CopiesHash(twin) != 8 {
		t.Fatalf("twin in the partner bucket: alias %x vs %x, copies %d",
			c.AliasHash(twin), c.AliasHash(h), c.CopiesHash(twin))
	}
	for i := 0; i < 1000; i++ {
		o := rng.Uint64()
		if c.AliasHash(o) == c.AliasHash(h) {
			continue
		}
		if n := c.CopiesHash(o); n != 0 {
			t.Fatalf("key of another class sees %d copies", n)
		}
	}
	for want := 7; want >= 0; want-- {
		if !c.RemoveHash(h) {
			t.Fatal("remove of a member failed")
		}
		if got := c.CopiesHash(h); got != want {
			t.Fatalf("after removal CopiesHash = %d, want %d", got, want)
		}
	}
}
