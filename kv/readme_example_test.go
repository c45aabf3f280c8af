package kv_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/sievekv/sievekv/kv"
)

// Example_readme runs README.md's "Using the engine" code, so a change of
// the API it shows fails here rather than in a reader's editor.
func Example_readme() {
	dir, err := os.MkdirTemp("", "sievekv-readme")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := kv.Open(dir, nil) // nil options: defaults (FilterAuto: 10 bits a key, shared by Monkey)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	err = db.Set([]byte("k"), []byte("v"), kv.Sync) // durable when it returns
	v, err := db.Get([]byte("k"))                   // kv.ErrNotFound when absent
	var buf []byte
	buf, err = db.GetAppend(buf[:0], []byte("k")) // the same, into a reused buffer
	fmt.Println(string(v), string(buf), err)

	b := db.NewBatch()
	b.Set([]byte("a"), []byte("1"))
	b.Delete([]byte("k"))
	err = db.Apply(b, kv.NoSync) // atomic
	_, err = db.Get([]byte("k"))
	fmt.Println(errors.Is(err, kv.ErrNotFound))

	it := db.NewIter(&kv.IterOptions{LowerBound: []byte("a"), UpperBound: []byte("z")})
	for it.First(); it.Valid(); it.Next() {
		fmt.Printf("%s=%s\n", it.Key(), it.Value())
	}
	err = it.Close()

	snap := db.NewSnapshot() // a consistent view; Get and NewIter on it
	defer snap.Close()

	n, err := db.EstimateDiskUsage([]byte("a"), []byte("m")) // table bytes of [a, m), from the indexes
	fmt.Println(n, err)

	s := db.Metrics().String() // levels, cache, WAL, and the reads the filters avoided
	fmt.Println(strings.Contains(s, "reads avoided by filters"))
	// Output:
	// v v <nil>
	// true
	// a=1
	// 0 <nil>
	// true
}
