// Command kvbench loads the same keys into sievekv and Pebble v2, configured
// alike, and measures point reads side by side: ops/s, latency percentiles,
// and table-file reads per Get counted the same way for both engines (a
// wrapper counting ReadAt calls on table files).
//
//	go run ./cmd/kvbench -n 1000000
//
// Workloads: readrandom (Gets of present keys) and readmissing (Gets of
// absent keys that fall inside the tables' key ranges, so only filters can
// spare the reads). See docs/engine.md for results.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sievekv/sievekv/kv"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kvbench:", err)
		os.Exit(1)
	}
}

type flags struct {
	n, reads, keySize, valueSize int
	memTable, blockSize          int
	cache                        int64
	filter                       string
	engines, workloads           string
	dir, jsonOut                 string
	seed                         uint64
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	fl := &flags{}
	fs := flag.NewFlagSet("kvbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&fl.n, "n", 1_000_000, "keys to load")
	fs.IntVar(&fl.reads, "reads", 200_000, "Gets per workload and engine")
	fs.IntVar(&fl.keySize, "keysize", 16, "key size in bytes")
	fs.IntVar(&fl.valueSize, "valuesize", 100, "value size in bytes")
	fs.IntVar(&fl.memTable, "memtable", 64<<20, "memtable size in bytes (both engines)")
	fs.IntVar(&fl.blockSize, "blocksize", 4096, "data block size in bytes (both engines)")
	fs.Int64Var(&fl.cache, "cache", 8<<20, "block cache size in bytes (both engines)")
	fs.StringVar(&fl.filter, "filter", "binary-fuse-8", "sievekv table filter")
	fs.StringVar(&fl.engines, "engines", "sievekv,pebble,pebble-l6filters", "engines to run")
	fs.StringVar(&fl.workloads, "workloads", "readrandom,readmissing", "workloads to run")
	fs.StringVar(&fl.dir, "dir", "", "directory for the databases (default: a temp dir, removed after)")
	fs.StringVar(&fl.jsonOut, "json", "", "also write the results as JSON to this file")
	fs.Uint64Var(&fl.seed, "seed", 1, "key generator seed")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fl.n <= 0 || fl.reads <= 0 || fl.keySize < 8 || fl.valueSize < 0 {
		return nil, fmt.Errorf("need -n > 0, -reads > 0, -keysize >= 8, -valuesize >= 0")
	}
	return fl, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	fl, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	filter, err := kv.ParseFilterType(fl.filter)
	if err != nil {
		return err
	}
	root := fl.dir
	if root == "" {
		if root, err = os.MkdirTemp("", "kvbench-"); err != nil {
			return err
		}
		defer os.RemoveAll(root)
	}
	keys := newKeySet(fl.seed, fl.n, fl.keySize)
	cfg := config{memTableSize: fl.memTable, blockSize: fl.blockSize, cacheSize: fl.cache, filter: filter}

	fmt.Fprintf(stdout, "kvbench: %d keys of %d bytes, %d-byte values; memtable %d B, block %d B, cache %d B (both engines)\n",
		fl.n, fl.keySize, fl.valueSize, fl.memTable, fl.blockSize, fl.cache)
	fmt.Fprintf(stdout, "pebble: v2, FormatNewest, snappy, bloom.FilterPolicy(10) on every level, explicit NewCache(%d) = cache + 2 x memtable, since Pebble charges memtables to its block cache\n", pebbleCacheSize(cfg))
	fmt.Fprintf(stdout, "both: loaded in random order, flushed and fully compacted before reads, WAL off during load\n")
	fmt.Fprintf(stdout, "sievekv: filter %s\n\n", filter)

	var results []result
	for _, name := range strings.Split(fl.engines, ",") {
		c := cfg
		c.dir = filepath.Join(root, name)
		e, err := openEngine(name, c)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := load(e, keys, fl.valueSize); err != nil {
			e.close()
			return fmt.Errorf("%s: load: %w", name, err)
		}
		for _, w := range strings.Split(fl.workloads, ",") {
			r, err := runReads(e, w, keys, fl.reads)
			if err != nil {
				e.close()
				return fmt.Errorf("%s: %s: %w", name, w, err)
			}
			r.Filter = filterName(name, filter)
			results = append(results, r)
		}
		if err := e.close(); err != nil {
			return fmt.Errorf("%s: close: %w", name, err)
		}
	}
	printTable(stdout, results)
	if fl.jsonOut != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(fl.jsonOut, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func openEngine(name string, c config) (engine, error) {
	switch name {
	case "sievekv":
		return openSieve(c)
	case "pebble":
		return openPebble(c, false)
	case "pebble-l6filters":
		return openPebble(c, true)
	}
	return nil, fmt.Errorf("unknown engine %q (want sievekv, pebble, pebble-l6filters)", name)
}

func filterName(engine string, f kv.FilterType) string {
	if engine == "sievekv" {
		return f.String()
	}
	return "bloom-10"
}
