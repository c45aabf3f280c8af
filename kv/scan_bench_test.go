package kv

import "testing"

// BenchmarkScan walks a compacted DB of 200k keys reading every key and
// value: the per-step cost of the iterator, including the copies Key and
// Value hand out and the read-gate entry of each Next (docs/reliability.md,
// "Hostile use").
func BenchmarkScan(b *testing.B) {
	d, keys := benchDB(b, 200_000)
	defer d.Close()
	b.ReportAllocs()
	var sink int
	steps := 0
	for b.Loop() {
		it := d.NewIter(nil)
		for ok := it.First(); ok; ok = it.Next() {
			sink += len(it.Key()) + len(it.Value())
			steps++
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if steps%len(keys) != 0 || sink == 0 {
		b.Fatalf("scans saw %d keys, not a multiple of %d", steps, len(keys))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/key")
}

// BenchmarkScanShort is a seek to a random present key and four more keys,
// each read (Key and Value) in a fresh iterator: the scan whose cost is
// mostly the iterator's making and closing rather than its steps.
func BenchmarkScanShort(b *testing.B) {
	d, keys := benchDB(b, 200_000)
	defer d.Close()
	b.ReportAllocs()
	var sink int
	for i := 0; b.Loop(); i++ {
		it := d.NewIter(nil)
		n := 0
		for ok := it.SeekGE(keys[(i*7919)%len(keys)]); ok && n < 5; ok = it.Next() {
			sink += len(it.Key()) + len(it.Value())
			n++
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if sink == 0 {
		b.Fatal("short scans read nothing")
	}
}
