package kv_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/sievekv/sievekv/kv"
)

// exampleDir makes a fresh directory for one example's database.
func exampleDir() string {
	dir, err := os.MkdirTemp("", "sievekv-example-")
	if err != nil {
		panic(err)
	}
	return dir
}

// openExampleDB opens a database in a fresh directory, as ExampleOpen
// shows; cleanup closes it and removes the directory.
func openExampleDB() (db *kv.DB, cleanup func()) {
	dir := exampleDir()
	db, err := kv.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	return db, func() {
		db.Close()
		os.RemoveAll(dir)
	}
}

// Open creates the database in an empty directory (or opens the one
// there); Close flushes nothing a reopen would not recover from the WAL.
func ExampleOpen() {
	dir := exampleDir()
	defer os.RemoveAll(dir)

	db, err := kv.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	if err := db.Set([]byte("greeting"), []byte("hello"), kv.Sync); err != nil {
		panic(err)
	}
	if err := db.Close(); err != nil {
		panic(err)
	}

	db, err = kv.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	v, err := db.Get([]byte("greeting"))
	fmt.Println(string(v), err)
	// Output: hello <nil>
}

// Get of a missing key returns ErrNotFound; Delete makes a key missing.
// kv.Sync makes a write durable before it returns; kv.NoSync survives a
// process crash but not a machine crash.
func ExampleDB_Get() {
	db, cleanup := openExampleDB()
	defer cleanup()

	db.Set([]byte("k"), []byte("v"), kv.NoSync)
	db.Delete([]byte("k"), kv.NoSync)
	_, err := db.Get([]byte("k"))
	fmt.Println(errors.Is(err, kv.ErrNotFound))
	// Output: true
}

// GetAppend reads into a buffer the caller reuses, so a loop of reads of
// cached or recently written keys allocates nothing.
func ExampleDB_GetAppend() {
	db, cleanup := openExampleDB()
	defer cleanup()

	for _, k := range []string{"a", "b", "c"} {
		db.Set([]byte(k), []byte("value of "+k), kv.NoSync)
	}
	buf := make([]byte, 0, 64)
	for _, k := range []string{"a", "b", "missing", "c"} {
		v, err := db.GetAppend(buf[:0], []byte(k))
		if err != nil {
			fmt.Println(k, err)
			continue
		}
		fmt.Println(string(v))
		buf = v // keep the grown buffer for the next read
	}
	// Output:
	// value of a
	// value of b
	// missing kv: not found
	// value of c
}

// A batch applies all of its writes or none of them.
func ExampleDB_Apply() {
	db, cleanup := openExampleDB()
	defer cleanup()

	b := db.NewBatch()
	b.Set([]byte("account/alice"), []byte("90"))
	b.Set([]byte("account/bob"), []byte("110"))
	b.Delete([]byte("pending/transfer-7"))
	if err := db.Apply(b, kv.Sync); err != nil {
		panic(err)
	}
	v, _ := db.Get([]byte("account/bob"))
	fmt.Println(b.Count(), string(v))
	// Output: 3 110
}

// An iterator with bounds sees the keys in [LowerBound, UpperBound), in
// either direction. Key and Value are valid until the iterator moves.
func ExampleDB_NewIter() {
	db, cleanup := openExampleDB()
	defer cleanup()

	for _, k := range []string{"a", "user/1", "user/2", "user/3", "z"} {
		db.Set([]byte(k), []byte("v-"+k), kv.NoSync)
	}
	it := db.NewIter(&kv.IterOptions{LowerBound: []byte("user/"), UpperBound: []byte("user0")})
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s=%s\n", it.Key(), it.Value())
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		fmt.Printf("%s ", it.Key())
	}
	fmt.Println()
	if err := it.Close(); err != nil {
		panic(err)
	}
	// Output:
	// user/1=v-user/1
	// user/2=v-user/2
	// user/3=v-user/3
	// user/3 user/2 user/1
}

// A snapshot reads the database as it was when the snapshot was taken.
func ExampleDB_NewSnapshot() {
	db, cleanup := openExampleDB()
	defer cleanup()

	db.Set([]byte("k"), []byte("old"), kv.NoSync)
	snap := db.NewSnapshot()
	defer snap.Close()
	db.Set([]byte("k"), []byte("new"), kv.NoSync)

	then, _ := snap.Get([]byte("k"))
	now, _ := db.Get([]byte("k"))
	fmt.Println(string(then), string(now))
	// Output: old new
}

// Metrics tell what the filters saved: every Get of a key a table lacks
// that the table's filter ruled out is a block read avoided.
func ExampleDB_Metrics() {
	db, cleanup := openExampleDB()
	defer cleanup()

	for i := 0; i < 1000; i++ {
		db.Set([]byte(fmt.Sprintf("key%04d", i)), []byte("v"), kv.NoSync)
	}
	db.Flush() // into a table, with its filter
	for i := 0; i < 100; i++ {
		db.Get([]byte(fmt.Sprintf("key%04d-absent", i))) // inside the table's key range
	}
	m := db.Metrics()
	fmt.Println(m.Filter.Checks >= 100, m.Filter.Negatives >= 95)
	// Output: true true
}

// A checkpoint is a copy of the live database, as of one moment, in a
// directory of its own: it opens as a database and no longer needs the
// original.
func ExampleDB_Checkpoint() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	db, _ := kv.Open(dir+"/live", nil)

	db.Set([]byte("k"), []byte("before"), kv.NoSync)
	if err := db.Checkpoint(dir + "/backup"); err != nil {
		panic(err)
	}
	db.Set([]byte("k"), []byte("after"), kv.NoSync)
	db.Close()
	os.RemoveAll(dir + "/live")

	backup, err := kv.Open(dir+"/backup", nil)
	if err != nil {
		panic(err)
	}
	defer backup.Close()
	v, _ := backup.Get([]byte("k"))
	fmt.Println(string(v))
	// Output: before
}

// DeleteRange removes every key in [start, end) with one write, however
// many keys that is; a snapshot taken before still sees them.
func ExampleDB_DeleteRange() {
	db, cleanup := openExampleDB()
	defer cleanup()

	for _, k := range []string{"log/1", "log/2", "log/3", "user/1"} {
		db.Set([]byte(k), []byte("v"), kv.NoSync)
	}
	snap := db.NewSnapshot()
	defer snap.Close()
	if err := db.DeleteRange([]byte("log/"), []byte("log0"), kv.Sync); err != nil {
		panic(err)
	}
	it := db.NewIter(nil)
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Println(string(it.Key()))
	}
	it.Close()
	old, _ := snap.Get([]byte("log/2"))
	fmt.Println("snapshot:", string(old))

	err := db.DeleteRange([]byte("b"), []byte("a"), kv.NoSync)
	fmt.Println(errors.Is(err, kv.ErrInvalidArgument))
	// Output:
	// user/1
	// snapshot: v
	// true
}

// A batch's DeleteRange commits atomically with the batch's other writes.
func ExampleBatch_DeleteRange() {
	db, cleanup := openExampleDB()
	defer cleanup()

	db.Set([]byte("cache/a"), []byte("stale"), kv.NoSync)
	db.Set([]byte("cache/b"), []byte("stale"), kv.NoSync)
	b := db.NewBatch()
	b.DeleteRange([]byte("cache/"), []byte("cache0"))
	b.Set([]byte("cache/generation"), []byte("2"))
	if err := db.Apply(b, kv.Sync); err != nil {
		panic(err)
	}
	_, err := db.Get([]byte("cache/a"))
	v, _ := db.Get([]byte("cache/generation"))
	fmt.Println(errors.Is(err, kv.ErrNotFound), string(v))
	// Output: true 2
}
