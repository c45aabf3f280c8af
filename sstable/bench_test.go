package sstable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/syndtr/goleveldb/leveldb/cache"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/storage"
	ldbtable "github.com/syndtr/goleveldb/leveldb/table"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// Benchmarks run side by side with goleveldb's table package (the anchor,
// test code only) on the same keys: 16-byte user keys, 100-byte random
// values, 4 KiB blocks, snappy, a 10 bits/key Bloom filter for goleveldb.
// Compare ratios within one run; see docs/engine.md, "Measurements".

const benchN = 100000

func benchKey(i int) []byte {
	k := make([]byte, 16)
	copy(k, "bench-")
	binary.BigEndian.PutUint64(k[8:], uint64(i)*2) // odd i*2+1 are absent
	return k
}

func benchValues() [][]byte {
	rng := rand.New(rand.NewPCG(1, 1))
	vs := make([][]byte, benchN)
	for i := range vs {
		vs[i] = make([]byte, 100)
		for j := range vs[i] {
			vs[i][j] = byte(rng.IntN(256))
		}
	}
	return vs
}

var benchRawBytes = int64(benchN * (16 + 100))

func buildSieve(b *testing.B, fs vfs.FS, name string, vals [][]byte, opts WriterOptions) Metadata {
	f, err := fs.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	w := NewWriter(f, opts)
	for i, v := range vals {
		if err := w.Add(base.MakeInternalKey(benchKey(i), base.SeqNum(i+1), base.KindSet), v); err != nil {
			b.Fatal(err)
		}
	}
	md, err := w.Finish()
	if err != nil {
		b.Fatal(err)
	}
	return md
}

func ldbOptions() *opt.Options {
	return &opt.Options{BlockSize: 4096, Filter: filter.NewBloomFilter(10), Compression: opt.SnappyCompression}
}

func buildLDB(b *testing.B, vals [][]byte) []byte {
	var buf bytes.Buffer
	w := ldbtable.NewWriter(&buf, ldbOptions())
	for i, v := range vals {
		if err := w.Append(benchKey(i), v); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// discardFile is a vfs.File that drops what is written, so the build
// benchmark measures the writers and not a file system.
type discardFile struct{ n int64 }

func (f *discardFile) Write(p []byte) (int, error)       { f.n += int64(len(p)); return len(p), nil }
func (f *discardFile) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (f *discardFile) Sync() error                       { return nil }
func (f *discardFile) Close() error                      { return nil }
func (f *discardFile) Stat() (os.FileInfo, error)        { return nil, errors.New("discardFile: no stat") }

// BenchmarkBuild measures table build throughput (MB/s of raw key+value
// bytes) for each filter choice and for goleveldb, both writing to a sink
// that discards the bytes.
func BenchmarkBuild(b *testing.B) {
	vals := benchValues()
	for _, ft := range []filters.Type{filters.TypeBinaryFuse8, filters.TypeBloom, filters.TypeNone} {
		b.Run("sievekv-"+ft.String(), func(b *testing.B) {
			b.SetBytes(benchRawBytes)
			for b.Loop() {
				w := NewWriter(&discardFile{}, WriterOptions{Filter: ft})
				for i, v := range vals {
					if err := w.Add(base.MakeInternalKey(benchKey(i), base.SeqNum(i+1), base.KindSet), v); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Finish(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("goleveldb-bloom10", func(b *testing.B) {
		b.SetBytes(benchRawBytes)
		for b.Loop() {
			w := ldbtable.NewWriter(io.Discard, ldbOptions())
			for i, v := range vals {
				if err := w.Append(benchKey(i), v); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchGetKeys is the order both engines' Get benchmarks ask for keys in:
// all benchN of them, strided so that successive Gets land in different
// blocks, present ones or (present false) their absent odd neighbours.
func benchGetKeys(present bool) [][]byte {
	keys := make([][]byte, benchN)
	for i := range keys {
		keys[i] = benchKey(i * 7919 % benchN)
		if !present {
			keys[i][15]++ // odd: absent
		}
	}
	return keys
}

// BenchmarkGet measures point Gets, present and absent keys, with a cold
// (no) block cache and a warm one holding the whole table, and reports
// data-block reads per Get.
func BenchmarkGet(b *testing.B) {
	vals := benchValues()
	fs := vfs.NewCounting(vfs.NewMem())
	buildSieve(b, fs, "/s.sst", vals, WriterOptions{})
	ldbBytes := buildLDB(b, vals)
	for _, warm := range []bool{false, true} {
		for _, present := range []bool{true, false} {
			name := fmt.Sprintf("present=%v/warm=%v", present, warm)
			keys := benchGetKeys(present)
			b.Run(name+"/sievekv-binaryfuse8", func(b *testing.B) {
				var c *Cache
				if warm {
					c = NewCache(64 << 20)
				}
				f, _ := fs.Open("/s.sst")
				st, _ := f.Stat()
				r, err := Open(f, st.Size(), ReaderOptions{Cache: c})
				if err != nil {
					b.Fatal(err)
				}
				if warm {
					for i := range benchN {
						r.Get(benchKey(i), base.SeqNumMax)
					}
				}
				before := r.Stats().Snapshot()
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					_, _, ok, err := r.Get(keys[i%benchN], base.SeqNumMax)
					if err != nil || ok != present {
						b.Fatal(ok, err)
					}
					i++
				}
				d := r.Stats().Snapshot().Sub(before)
				b.ReportMetric(float64(d.DataBlockReads)/float64(i), "blockreads/op")
			})
			b.Run(name+"/goleveldb-bloom10", func(b *testing.B) {
				var ns *cache.NamespaceGetter
				if warm {
					ns = &cache.NamespaceGetter{Cache: cache.NewCache(cache.NewLRU(64 << 20)), NS: 1}
				}
				r, err := ldbtable.NewReader(bytes.NewReader(ldbBytes), int64(len(ldbBytes)), storage.FileDesc{Type: storage.TypeTable, Num: 1}, ns, nil, ldbOptions())
				if err != nil {
					b.Fatal(err)
				}
				if warm {
					for i := range benchN {
						r.Get(benchKey(i), nil)
					}
				}
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					_, err := r.Get(keys[i%benchN], nil)
					if (err == nil) != present {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkFilterChoice builds the same 100k-key table with a binary fuse 8
// filter and with a 10 bits/key Bloom filter and reports filter bits per
// key and data-block reads per absent-key Get.
func BenchmarkFilterChoice(b *testing.B) {
	vals := benchValues()
	for _, ft := range []filters.Type{filters.TypeBinaryFuse8, filters.TypeBloom, filters.TypeBlockedBloom, filters.TypeXor8, filters.TypeBinaryFuse16} {
		b.Run(ft.String(), func(b *testing.B) {
			fs := vfs.NewMem()
			md := buildSieve(b, fs, "/f", vals, WriterOptions{Filter: ft, BloomBitsPerKey: 10})
			f, _ := fs.Open("/f")
			r, err := Open(f, int64(md.Size), ReaderOptions{})
			if err != nil {
				b.Fatal(err)
			}
			before := r.Stats().Snapshot()
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				k := benchKey(i % benchN)
				binary.BigEndian.PutUint64(k[8:], uint64(i)*2+1)
				r.Get(k, base.SeqNumMax)
				i++
			}
			d := r.Stats().Snapshot().Sub(before)
			b.ReportMetric(float64(md.Properties.FilterSize*8)/benchN, "filterbits/key")
			b.ReportMetric(float64(d.DataBlockReads)/float64(i), "blockreads/op")
		})
	}
}
