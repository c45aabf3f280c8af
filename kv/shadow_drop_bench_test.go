package kv

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
)

// BenchmarkShadowDropChurn measures early drop where it can act: a tree of
// several levels under a churn of deletes and re-creations of random keys,
// so compactions of the lower levels keep meeting values whose tombstones
// sit above them. Each round loads three identical DBs (uncharged) and runs
// the same churn on one after another, rotating which goes first, each
// phase ending when its compactions are done: early drop on (the index
// on), early drop off with the index still on, and the index off. Only one
// DB works at a time, so each phase's process CPU is its own. It reports
// per side the CPU per churn op, the table bytes written per churn op (the
// compaction work early drop saves), the live table bytes at the end, and
// the values dropped early; and the ratios on/off of CPU and of bytes
// written (median over rounds), with the two "off" sides against each
// other as a near-A/A control (they differ only in keeping the index).
//
//	go test ./kv -run '^$' -bench ShadowDropChurn -benchtime 4x -count 3
var benchChurnKeys, benchChurnOps = 100_000, 100_000

func BenchmarkShadowDropChurn(b *testing.B) {
	rng := rand.New(rand.NewPCG(19, 4))
	n := benchChurnKeys
	keys, val := benchKeysAndValue(rng, n)
	// The same churn for every side: a key index, deleting when odd.
	churn := make([]uint32, benchChurnOps)
	for i := range churn {
		churn[i] = uint32(rng.IntN(n))<<1 | uint32(rng.IntN(2))
	}
	type side struct {
		name               string
		noDrop, indexOff   bool
		cpu                time.Duration
		written, live, dro uint64
	}
	sides := []*side{{name: "on"}, {name: "nodrop", noDrop: true}, {name: "indexoff", indexOff: true}}
	load := func(s *side) *DB {
		d, err := Open("db", &Options{FS: vfs.NewMem(), DisableWAL: true, DisableTombstoneIndex: s.indexOff,
			MemTableSize: 256 << 10, LBaseMaxBytes: 1 << 20, TargetFileSize: 256 << 10})
		if err != nil {
			b.Fatal(err)
		}
		d.noShadowDrop = s.noDrop
		for _, k := range keys {
			if err := d.Set(k, val, NoSync); err != nil {
				b.Fatal(err)
			}
		}
		settle(b, d)
		return d
	}
	phase := func(d *DB) {
		for _, c := range churn {
			k := keys[c>>1]
			var err error
			if c&1 == 1 {
				err = d.Delete(k, NoSync)
			} else {
				err = d.Set(k, val, NoSync)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			b.Fatal(err)
		}
		settle(b, d)
	}
	var cpuRatio, writeRatio, aaCPU, aaWrite []float64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		dbs := make([]*DB, len(sides))
		for j, s := range sides {
			dbs[j] = load(s)
		}
		b.StartTimer()
		var cpu [3]time.Duration
		var written [3]uint64
		for k := range sides {
			j := (i + k) % len(sides)
			runtime.GC()
			before := dbs[j].Metrics().TableBytesWritten
			start := testutil.ProcessCPUTime(b)
			phase(dbs[j])
			cpu[j] = testutil.ProcessCPUTime(b) - start
			m := dbs[j].Metrics()
			written[j] = m.TableBytesWritten - before
			s := sides[j]
			s.cpu += cpu[j]
			s.written += written[j]
			s.live += liveTableBytes(dbs[j])
			s.dro += m.Compaction.ShadowedDropped
		}
		cpuRatio = append(cpuRatio, float64(cpu[0])/float64(cpu[2]))
		writeRatio = append(writeRatio, float64(written[0])/float64(written[2]))
		aaCPU = append(aaCPU, float64(cpu[1])/float64(cpu[2]))
		aaWrite = append(aaWrite, float64(written[1])/float64(written[2]))
		for _, d := range dbs {
			if err := d.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	ops := float64(b.N * len(churn))
	for _, s := range sides {
		b.ReportMetric(float64(s.cpu.Nanoseconds())/ops, s.name+"-cpu-ns/op")
		b.ReportMetric(float64(s.written)/ops, s.name+"-written-B/op")
		b.ReportMetric(float64(s.live)/float64(b.N)/(1<<20), s.name+"-live-MiB")
		b.ReportMetric(float64(s.dro)/float64(b.N), s.name+"-dropped/round")
	}
	b.ReportMetric(roundsMedian(cpuRatio), "median-cpu-on/indexoff")
	b.ReportMetric(roundsMedian(writeRatio), "median-written-on/indexoff")
	b.ReportMetric(roundsMedian(aaCPU), "median-cpu-nodrop/indexoff")
	b.ReportMetric(roundsMedian(aaWrite), "median-written-nodrop/indexoff")
}
