package filters

import (
	"fmt"
	"testing"
)

// TestCuckooEncodedLen checks EncodedLen against the encoding itself for
// every fingerprint width and several sizes, empty and filled.
func TestCuckooEncodedLen(t *testing.T) {
	for _, fpRate := range []float64{0.03, 0.004, 0.0003} {
		for _, n := range []int{1, 100, 1000, 70_000} {
			c, err := NewCuckoo(n, fpRate)
			if err != nil {
				t.Fatal(err)
			}
			for fill := 0; fill < 2; fill++ {
				enc, err := c.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				if got := c.EncodedLen(); got != len(enc) {
					t.Fatalf("n=%d fpRate=%v filled=%d: EncodedLen %d, encoding %d bytes", n, fpRate, fill, got, len(enc))
				}
				for i := 0; i < n/2; i++ {
					if err := c.Add([]byte(fmt.Sprint(i))); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}
