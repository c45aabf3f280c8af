package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"
)

// keySet holds the loaded keys and draws absent ones. Present keys are
// random keySize-byte strings whose last byte is even; absent keys are a
// present key with the last byte made odd, so they fall between present
// keys (inside every table's range) and are absent by construction.
type keySet struct {
	present [][]byte
	rng     *rand.Rand
	keySize int
}

func newKeySet(seed uint64, n, keySize int) *keySet {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ks := &keySet{rng: rng, keySize: keySize}
	seen := make(map[string]bool, n)
	for len(ks.present) < n {
		k := make([]byte, keySize)
		binary.BigEndian.PutUint64(k, rng.Uint64())
		for i := 8; i < keySize; i++ {
			k[i] = byte(rng.Uint32())
		}
		k[keySize-1] &^= 1
		if !seen[string(k)] {
			seen[string(k)] = true
			ks.present = append(ks.present, k)
		}
	}
	return ks
}

func (ks *keySet) randomPresent() []byte { return ks.present[ks.rng.IntN(len(ks.present))] }

func (ks *keySet) randomAbsent() []byte {
	k := slices.Clone(ks.randomPresent())
	k[len(k)-1] |= 1
	return k
}

// load writes every key in random order, then flushes and fully compacts,
// so both engines serve reads from the same shape: one sorted run.
func load(e engine, ks *keySet, valueSize int) error {
	val := make([]byte, valueSize)
	for i, k := range ks.present {
		binary.LittleEndian.PutUint32(val[:min(4, valueSize)], uint32(i))
		if err := e.set(k, val); err != nil {
			return err
		}
	}
	return e.flushAndCompact()
}

// result is one engine's measurement of one workload.
type result struct {
	Workload            string  `json:"workload"`
	Engine              string  `json:"engine"`
	Filter              string  `json:"filter"`
	Ops                 int     `json:"ops"`
	OpsPerSec           float64 `json:"ops_per_sec"`
	P50us               float64 `json:"p50_us"`
	P99us               float64 `json:"p99_us"`
	DataBlockReadsPerOp float64 `json:"data_block_reads_per_op"`
	BytesReadPerOp      float64 `json:"bytes_read_per_op"`
	FilterBytesPerKey   float64 `json:"filter_bytes_per_key"`
	Found               int     `json:"found"`
}

func runReads(e engine, workload string, ks *keySet, n int) (result, error) {
	var next func() []byte
	switch workload {
	case "readrandom":
		next = ks.randomPresent
	case "readmissing":
		next = ks.randomAbsent
	default:
		return result{}, fmt.Errorf("unknown workload %q (want readrandom, readmissing)", workload)
	}
	// Warm up: fill the block cache as a running server would have it.
	for i := 0; i < min(n/10, 20000); i++ {
		if _, err := e.get(next()); err != nil {
			return result{}, err
		}
	}
	reads0, bytes0 := e.tableReads()
	lat := make([]time.Duration, n)
	found := 0
	start := time.Now()
	for i := 0; i < n; i++ {
		k := next()
		t0 := time.Now()
		ok, err := e.get(k)
		lat[i] = time.Since(t0)
		if err != nil {
			return result{}, err
		}
		if ok {
			found++
		}
	}
	elapsed := time.Since(start)
	reads1, bytes1 := e.tableReads()
	slices.Sort(lat)
	r := result{
		Workload:            workload,
		Engine:              e.name(),
		Ops:                 n,
		OpsPerSec:           float64(n) / elapsed.Seconds(),
		P50us:               float64(lat[n/2].Nanoseconds()) / 1e3,
		P99us:               float64(lat[n*99/100].Nanoseconds()) / 1e3,
		DataBlockReadsPerOp: float64(reads1-reads0) / float64(n),
		BytesReadPerOp:      float64(bytes1-bytes0) / float64(n),
		FilterBytesPerKey:   float64(e.filterBytes()) / float64(len(ks.present)),
		Found:               found,
	}
	want := 0
	if workload == "readrandom" {
		want = n
	}
	if found != want {
		return r, fmt.Errorf("%s found %d of %d keys, want %d: wrong answers", e.name(), found, n, want)
	}
	return r, nil
}

// printTable prints one row per engine and workload, with each engine's
// ratio to sievekv's figures where both ran.
func printTable(w io.Writer, rs []result) {
	fmt.Fprintf(w, "%-12s %-17s %-15s %12s %9s %9s %12s %12s %11s\n",
		"workload", "engine", "filter", "ops/s", "p50(us)", "p99(us)", "reads/op", "bytes/op", "filterB/key")
	for _, r := range rs {
		fmt.Fprintf(w, "%-12s %-17s %-15s %12.0f %9.2f %9.2f %12.4f %12.1f %11.3f\n",
			r.Workload, r.Engine, r.Filter, r.OpsPerSec, r.P50us, r.P99us, r.DataBlockReadsPerOp, r.BytesReadPerOp, r.FilterBytesPerKey)
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		if r.Engine != "sievekv" {
			continue
		}
		for _, o := range rs {
			if o.Workload != r.Workload || o.Engine == "sievekv" {
				continue
			}
			fmt.Fprintf(w, "%-12s sievekv/%-17s ops/s %.2fx   reads/op %s   filter bytes/key %.2fx\n",
				r.Workload, o.Engine, r.OpsPerSec/o.OpsPerSec, ratio(r.DataBlockReadsPerOp, o.DataBlockReadsPerOp), r.FilterBytesPerKey/o.FilterBytesPerKey)
		}
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		if a == 0 {
			return "both 0"
		}
		return "inf"
	}
	return fmt.Sprintf("%.3fx", a/b)
}
