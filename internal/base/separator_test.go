package base

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestShortSeparatorProperty: for random a < b over a small alphabet
// (with 0x00 and 0xff, so prefixes, successors and 0xff tails are
// common), ShortSeparator returns x with a <= x < b, no longer than a.
func TestShortSeparatorProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	alphabet := []byte{0x00, 0x01, 'a', 'b', 'c', 0xfe, 0xff}
	key := func() []byte {
		k := make([]byte, rng.IntN(6))
		for i := range k {
			k[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return k
	}
	for range 200_000 {
		a, b := key(), key()
		if bytes.Compare(a, b) >= 0 {
			continue
		}
		x := ShortSeparator(a, b)
		if bytes.Compare(a, x) > 0 || bytes.Compare(x, b) >= 0 || len(x) > len(a) {
			t.Fatalf("ShortSeparator(%q, %q) = %q", a, b, x)
		}
	}
}

func TestShortSeparatorCases(t *testing.T) {
	ff := bytes.Repeat([]byte{0xff}, 100)
	for _, c := range []struct{ a, b, want string }{
		{"abcdef", "abzz", "abd"},                                // a's byte plus one
		{"k7" + string(ff), "k8" + string(ff), "k8"},             // b's prefix past a 0xff tail
		{"k7" + string(ff) + "a", "k8", "k7" + string(ff) + "b"}, // b too short: a's later byte
		{"k7" + string(ff), "k8", "k7" + string(ff)},             // nothing shorter
		{"ab", "abc", "ab"},                                      // a prefix of b
	} {
		if got := ShortSeparator([]byte(c.a), []byte(c.b)); string(got) != c.want {
			t.Errorf("ShortSeparator(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
