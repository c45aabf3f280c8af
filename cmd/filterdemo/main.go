// Command filterdemo (go run ./cmd/filterdemo; `make run` is the kvshell)
// shows a newcomer the filters: it builds every filter in
// github.com/sievekv/sievekv/filters over a sample of keys and prints, per
// filter, its size in bits per key, its target false-positive rate, the
// false-positive rate measured on keys never added, and its fill ratio or
// load factor where that notion applies.
//
// Each filter is one entry in the entries slice; adding a filter to the
// table is adding one entry. Every run also checks that each sample key is
// reported present (no false negatives) and fails loudly if one is not.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/sievekv/sievekv/filters"
)

// entry describes one row of the table.
type entry struct {
	name     string
	targetFP float64
	// build constructs the filter holding exactly keys.
	build func(keys [][]byte) (filters.Filter, error)
	// fill returns the filter's fill ratio (Bloom family) or load factor (cuckoo, quotient); nil means "use FillRatio() if
	// the filter has one, else print -".
	fill func(f filters.Filter) float64
}

// demoFP is the target rate of every built-in entry: 1%, the usual
// sstable setting (about 10 bits per key for a Bloom filter).
const demoFP = 0.01

var entries = []entry{
	bloomEntry("bloom", func(n int) (*filters.Bloom, error) { return filters.NewBloom(n, demoFP) }),
	bloomEntry("blocked bloom", func(n int) (*filters.BlockedBloom, error) { return filters.NewBlockedBloom(n, demoFP) }),
	bloomEntry("counting bloom", func(n int) (*filters.CountingBloom, error) { return filters.NewCountingBloom(n, demoFP) }),
	// Started at a tenth of the keys, so the run shows it growing.
	bloomEntry("scalable bloom (n0=n/10)", func(n int) (*filters.ScalableBloom, error) {
		return filters.NewScalableBloom(max(1, n/10), demoFP)
	}),
	// The static filters are built once from the whole key set; their FP
	// rate is fixed by the fingerprint width, not chosen.
	{
		name: "xor8", targetFP: 1.0 / 256,
		build: func(keys [][]byte) (filters.Filter, error) { return filters.BuildXor8(keys) },
	},
	{
		name: "binary fuse 8", targetFP: 1.0 / 256,
		build: func(keys [][]byte) (filters.Filter, error) { return filters.BuildBinaryFuse8(keys) },
	},
	{
		name: "binary fuse 16", targetFP: 1.0 / 65536,
		build: func(keys [][]byte) (filters.Filter, error) { return filters.BuildBinaryFuse16(keys) },
	},
	{
		name: "binary fuse 4-wise 10-bit", targetFP: 1.0 / 1024,
		build: func(keys [][]byte) (filters.Filter, error) {
			return filters.BuildBinaryFuse(keys, filters.FuseOptions{Arity: 4, FingerprintBits: 10})
		},
	},
	// The dynamic filters take adds and removes; each is sized for n keys.
	dynamicEntry("cuckoo", func(n int) (*filters.Cuckoo, error) { return filters.NewCuckoo(n, demoFP) }),
	dynamicEntry("quotient", func(n int) (*filters.Quotient, error) { return filters.NewQuotient(n, demoFP) }),
}

// bloomEntry is the entry of a Bloom-family filter at demoFP: fresh sizes
// it for the keys, whose Adds cannot fail.
func bloomEntry[F interface {
	filters.Filter
	Add(key []byte)
}](name string, fresh func(n int) (F, error)) entry {
	return entry{name: name, targetFP: demoFP, build: func(keys [][]byte) (filters.Filter, error) {
		f, err := fresh(len(keys))
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			f.Add(k)
		}
		return f, nil
	}}
}

// dynamicEntry is the entry of a dynamic filter at demoFP: fresh sizes it
// for the keys, the build stops at the first failed Add, and the fill
// column is its load factor.
func dynamicEntry[F interface {
	filters.Filter
	Add(key []byte) error
	LoadFactor() float64
}](name string, fresh func(n int) (F, error)) entry {
	return entry{
		name: name, targetFP: demoFP,
		build: func(keys [][]byte) (filters.Filter, error) {
			f, err := fresh(len(keys))
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				if err := f.Add(k); err != nil {
					return f, err
				}
			}
			return f, nil
		},
		fill: func(f filters.Filter) float64 { return f.(F).LoadFactor() },
	}
}

// row is one measured line of the table.
type row struct {
	name       string
	bitsPerKey float64 // encoded size (envelope included) per key
	targetFP   float64
	measuredFP float64
	fill       float64
	hasFill    bool
	build      time.Duration
}

// table builds each entry's filter over keys, checks it reports every key,
// and measures its false-positive rate on absent (keys never added).
func table(entries []entry, keys, absent [][]byte) ([]row, error) {
	rows := make([]row, 0, len(entries))
	for _, e := range entries {
		start := time.Now()
		f, err := e.build(keys)
		if err != nil {
			return nil, fmt.Errorf("filterdemo: %s: build: %w", e.name, err)
		}
		elapsed := time.Since(start)
		for i, k := range keys {
			if !f.MayContain(k) {
				return nil, fmt.Errorf("filterdemo: %s: false negative for sample key %d (%q)", e.name, i, k)
			}
		}
		enc, err := f.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("filterdemo: %s: marshal: %w", e.name, err)
		}
		fp := 0
		for _, k := range absent {
			if f.MayContain(k) {
				fp++
			}
		}
		r := row{
			name:       e.name,
			bitsPerKey: float64(8*len(enc)) / float64(len(keys)),
			targetFP:   e.targetFP,
			measuredFP: float64(fp) / float64(len(absent)),
			build:      elapsed,
		}
		if e.fill != nil {
			r.fill, r.hasFill = e.fill(f), true
		} else if fr, ok := f.(interface{ FillRatio() float64 }); ok {
			r.fill, r.hasFill = fr.FillRatio(), true
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func render(w io.Writer, rows []row, nKeys, nAbsent int) error {
	fmt.Fprintf(w, "%d keys added, false positives measured on %d keys never added\n\n", nKeys, nAbsent)
	// Numbers align right; names are padded to one width so they read
	// left-aligned in the right-aligned first column.
	width := len("filter")
	for _, r := range rows {
		width = max(width, len(r.name))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tbits/key\ttarget FP\tmeasured FP\tfill or load\tbuild\t\n", width, "filter")
	for _, r := range rows {
		fill := "-"
		if r.hasFill {
			fill = fmt.Sprintf("%.3f", r.fill)
		}
		fmt.Fprintf(tw, "%-*s\t%.2f\t%.3f%%\t%.3f%%\t%s\t%v\t\n",
			width, r.name, r.bitsPerKey, 100*r.targetFP, 100*r.measuredFP, fill, r.build.Round(time.Millisecond))
	}
	return tw.Flush()
}

// sampleKeys returns n keys shaped like user keys. Present and absent sets
// use different prefixes, so they are disjoint.
func sampleKeys(prefix string, n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "%s/%010d", prefix, i)
	}
	return keys
}

// maxKeys bounds -n and -absent: every key is held in memory, and far
// past this a run only dies allocating.
const maxKeys = 100_000_000

// checkFlags refuses a run whose table would mean nothing or that cannot
// run: a measured FP rate over fewer than 1000 absent keys (one key gives
// 0% or 100%), key counts that only die allocating, and arguments the
// flags do not take ("filterdemo 1000" ran the default 100k keys).
func checkFlags(n, absent int, rest []string) error {
	if n < 1 || n > maxKeys || absent < 1000 || absent > maxKeys {
		return fmt.Errorf("need -n from 1 to %d and -absent from 1000 to %d", maxKeys, maxKeys)
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q (the key counts are -n and -absent)", rest[0])
	}
	return nil
}

func main() {
	n := flag.Int("n", 100_000, "keys added to each filter")
	q := flag.Int("absent", 1_000_000, "absent keys queried to measure the false-positive rate")
	flag.Parse()
	if err := checkFlags(*n, *q, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "filterdemo:", err)
		os.Exit(2)
	}
	rows, err := table(entries, sampleKeys("user", *n), sampleKeys("miss", *q))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := render(os.Stdout, rows, *n, *q); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
