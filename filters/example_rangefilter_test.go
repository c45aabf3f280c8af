package filters_test

import (
	"fmt"

	"github.com/sievekv/sievekv/filters"
)

// A range filter answers whether any key it was built from may lie in
// [lo, hi): a bounded scan over an empty range can skip the table.
func ExampleNewRangeFilter() {
	keys := [][]byte{[]byte("user0100"), []byte("user0200"), []byte("user0300")}
	rf, err := filters.NewRangeFilter(keys, 16)
	if err != nil {
		panic(err)
	}
	fmt.Println(rf.MayContainRange([]byte("user0150"), []byte("user0250"))) // holds user0200
	fmt.Println(rf.MayContainRange([]byte("user0201"), []byte("user0299"))) // empty
	fmt.Println(rf.MayContain([]byte("user0300")))
	// Output:
	// true
	// false
	// true
}
