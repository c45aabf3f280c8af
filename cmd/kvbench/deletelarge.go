package main

// deletelarge: does deleted data leave the disk on an idle DB? 16,000 keys
// (or -n, if smaller) with 4 KiB values are loaded and compacted to the bottom level, half of
// them are deleted, and the DB is left idle while kvbench samples the bytes
// of its table files. No engine is asked to compact: what the chart shows is
// what each engine's own background work does.
//
// deleterangelarge is the same with one DeleteRange of the lowest three
// quarters of the keys instead of point deletes: a range tombstone is one
// small entry, so only an engine that weighs what it covers gives the space
// back. Engines without range deletion (goleveldb) skip it.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// errNoDeleteRange is an engine's delRange when it has no range deletion.
var errNoDeleteRange = errors.New("kvbench: the engine has no range deletion")

// isDeleteLarge reports whether w is one of the idle-reclaim workloads.
func isDeleteLarge(w string) bool { return w == "deletelarge" || w == "deleterangelarge" }

const (
	// deleteLargeKeys is the scenario's key count (#19: 16,000 keys of
	// 4 KiB); runs loading fewer than 64,000 keys use a quarter of theirs
	// (deleteLargeKeyCount), so a test's tiny run keeps the scenario's
	// shape without writing its 64 MB into every engine.
	deleteLargeKeys      = 16_000
	deleteLargeValueSize = 4 << 10
	// deleteLargeSample is the sampling interval of table bytes.
	deleteLargeSample = 250 * time.Millisecond
)

// deleteLargeKeyCount is how many keys deletelarge writes for a run
// loading n keys: deleteLargeKeys, or a quarter of n below 4x that.
func deleteLargeKeyCount(n int) int { return min(deleteLargeKeys, max(n/4, 1)) }

// sample is one point of a table-bytes-over-time series.
type sample struct {
	Sec   float64 `json:"sec"`   // since the deletes ended
	Ratio float64 `json:"ratio"` // table bytes over the pre-delete table bytes
}

// runDeleteLarge runs the workload on a fresh DB of r's engine and returns
// one result whose Samples hold the series and TableBytesRatio its last
// point; OpsPerSec is the deletes' rate.
func runDeleteLarge(r *runner, w string, fl *flags, root string, progress io.Writer) (result, error) {
	dir := dirOf(root, r.name, w)
	ioc := &ioCounters{}
	e, err := r.open(dir, ioc)
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	res, err := deleteLarge(r, e, w, dir, fl, progress)
	if cerr := e.close(); err == nil {
		err = cerr
	}
	return res, err
}

func deleteLarge(r *runner, e engine, w, dir string, fl *flags, progress io.Writer) (result, error) {
	n := deleteLargeKeyCount(fl.n)
	ks := newKeySet(fl.seed+17, n, fl.keySize)
	val := make([]byte, deleteLargeValueSize)
	for i, k := range ks.present {
		if err := e.set(k, valueFor(val, i)); err != nil {
			return result{}, err
		}
	}
	if err := e.compactAll(); err != nil {
		return result{}, fmt.Errorf("compact: %w", err)
	}
	before := tableBytesOnDisk(dir)
	if before <= 0 {
		return result{}, fmt.Errorf("no table bytes after the load")
	}
	bar := newBar(progress, int(fl.idle/deleteLargeSample), fmt.Sprintf("%-24s %-17s", w, r.name))
	var deleted func(i int) bool
	ops := 0
	start := time.Now()
	if w == "deleterangelarge" {
		lo, hi := ks.sorted[0], ks.sorted[n*3/4]
		if err := e.delRange(lo, hi); err != nil {
			return result{}, err
		}
		deleted = func(i int) bool { return bytes.Compare(ks.present[i], hi) < 0 }
		ops = 1
	} else {
		half := ks.present[:n/2]
		for _, k := range half {
			if err := e.del(k); err != nil {
				return result{}, err
			}
		}
		deleted = func(i int) bool { return i < len(half) }
		ops = len(half)
	}
	elapsed := time.Since(start)
	idleFrom := time.Now()
	var samples []sample
	for t := time.Duration(0); t <= fl.idle; t += deleteLargeSample {
		time.Sleep(time.Until(idleFrom.Add(t)))
		samples = append(samples, sample{Sec: time.Since(idleFrom).Seconds(),
			Ratio: float64(tableBytesOnDisk(dir)) / float64(before)})
		bar.Add(1)
	}
	bar.Finish()
	// The answers must stay right whatever compaction did.
	for i, k := range ks.present {
		found, err := e.get(k)
		if err != nil {
			return result{}, err
		}
		if found == deleted(i) {
			return result{}, fmt.Errorf("key %d: found=%v after the deletes", i, found)
		}
	}
	res := result{Workload: w, Engine: r.name, Filter: r.filter, Ops: ops,
		OpsPerSec: float64(ops) / elapsed.Seconds(), ElapsedSec: elapsed.Seconds(),
		Samples: samples, TableBytesRatio: samples[len(samples)-1].Ratio, FilterBytesPerKey: -1}
	if s, ok := e.(*sieveEngine); ok {
		for _, l := range s.db.Metrics().Levels {
			res.EngineShadowedByLevel = append(res.EngineShadowedByLevel, l.ShadowedBytes)
		}
	}
	return res, nil
}
