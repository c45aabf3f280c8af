package filters_test

import (
	"errors"
	"fmt"

	"github.com/sievekv/sievekv/filters"
)

// Example_readme runs README.md's "Using the filters" code and checks
// what its comments say.
func Example_readme() {
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}

	f, _ := filters.BuildBinaryFuse8(keys) // static: ~9 bits/key, 0.39% FP
	fmt.Println(f.MayContain([]byte("a"))) // false = definitely absent

	c, _ := filters.NewCuckoo(1_000_000, 0.01) // dynamic: Add and Remove
	_ = c.Add([]byte("x"))                     // filters.ErrFull when full, filter unchanged
	fmt.Println(c.MayContain([]byte("x")), c.Remove([]byte("x")), c.MayContain([]byte("x")))

	enc, _ := f.MarshalBinary()      // magic, type, version, CRC32C
	g, err := filters.Unmarshal(enc) // any filter; errors wrap filters.ErrCorrupt
	fmt.Println(g.MayContain([]byte("b")), err)

	enc[len(enc)-1] ^= 1
	_, err = filters.Unmarshal(enc)
	fmt.Println(errors.Is(err, filters.ErrCorrupt))
	// Output:
	// true
	// true true false
	// true <nil>
	// true
}
