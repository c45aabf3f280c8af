// Command filterdemo is what `make run` shows a newcomer: it builds every
// filter in github.com/sievekv/sievekv/filters over a sample of keys and
// prints, per filter, its size in bits per key, its target false-positive
// rate, the false-positive rate measured on keys never added, and its fill
// ratio where that notion applies.
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
	{
		name: "bloom", targetFP: demoFP,
		build: func(keys [][]byte) (filters.Filter, error) {
			f, err := filters.NewBloom(len(keys), demoFP)
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				f.Add(k)
			}
			return f, nil
		},
	},
	{
		name: "blocked bloom", targetFP: demoFP,
		build: func(keys [][]byte) (filters.Filter, error) {
			f, err := filters.NewBlockedBloom(len(keys), demoFP)
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				f.Add(k)
			}
			return f, nil
		},
	},
	{
		name: "counting bloom", targetFP: demoFP,
		build: func(keys [][]byte) (filters.Filter, error) {
			f, err := filters.NewCountingBloom(len(keys), demoFP)
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				f.Add(k)
			}
			return f, nil
		},
	},
	{
		// Started at a tenth of the keys, so the run shows it growing.
		name: "scalable bloom (n0=n/10)", targetFP: demoFP,
		build: func(keys [][]byte) (filters.Filter, error) {
			f, err := filters.NewScalableBloom(max(1, len(keys)/10), demoFP)
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				f.Add(k)
			}
			return f, nil
		},
	},
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
	{
		name: "cuckoo", targetFP: demoFP,
		build: func(keys [][]byte) (filters.Filter, error) {
			f, err := filters.NewCuckoo(len(keys), demoFP)
			if err != nil {
				return nil, err
			}
			return f, addEach(keys, f.Add)
		},
		fill: func(f filters.Filter) float64 { return f.(*filters.Cuckoo).LoadFactor() },
	},
	{
		name: "quotient", targetFP: demoFP,
		build: func(keys [][]byte) (filters.Filter, error) {
			f, err := filters.NewQuotient(len(keys), demoFP)
			if err != nil {
				return nil, err
			}
			return f, addEach(keys, f.Add)
		},
		fill: func(f filters.Filter) float64 { return f.(*filters.Quotient).LoadFactor() },
	},
}

// addEach adds every key with a fallible Add, stopping at the first error.
func addEach(keys [][]byte, add func([]byte) error) error {
	for _, k := range keys {
		if err := add(k); err != nil {
			return err
		}
	}
	return nil
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

func main() {
	n := flag.Int("n", 100_000, "keys added to each filter")
	q := flag.Int("absent", 1_000_000, "absent keys queried to measure the false-positive rate")
	flag.Parse()
	if *n <= 0 || *q <= 0 {
		fmt.Fprintln(os.Stderr, "filterdemo: -n and -absent must be positive")
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
