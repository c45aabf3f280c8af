package wal

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/syndtr/goleveldb/leveldb/journal"
)

// Benchmarks run sievekv's log beside the two anchors' log framings in one
// process, so only the ratios mean anything (docs/engine.md, "Benchmarks"):
//
//	go test -run '^$' -bench 'Write|Read' -count 6 ./wal

var benchSizes = []int{16, 100, 1024, 16 << 10, 256 << 10}

// recordWriter is what the three framings have in common for writing.
type recordWriter interface {
	write(p []byte) error
	flush() error
}

type sieveW struct{ w *Writer }

func (s sieveW) write(p []byte) error { _, err := s.w.WriteRecord(p); return err }
func (s sieveW) flush() error         { return s.w.Flush() }

type pebbleW struct{ w *record.Writer }

func (s pebbleW) write(p []byte) error { _, err := s.w.WriteRecord(p); return err }
func (s pebbleW) flush() error         { return s.w.Flush() }

type leveldbW struct{ w *journal.Writer }

func (s leveldbW) write(p []byte) error {
	wr, err := s.w.Next()
	if err != nil {
		return err
	}
	_, err = wr.Write(p)
	return err
}
func (s leveldbW) flush() error { return s.w.Flush() }

var writerImpls = []struct {
	name string
	mk   func(io.Writer) recordWriter
}{
	{"sievekv", func(w io.Writer) recordWriter { return sieveW{NewWriter(w, &nopSyncer{}, 1)} }},
	{"pebble", func(w io.Writer) recordWriter { return pebbleW{record.NewWriter(w)} }},
	{"goleveldb", func(w io.Writer) recordWriter { return leveldbW{journal.NewWriter(w)} }},
}

// BenchmarkWrite measures framing throughput (MB/s of payload) into
// io.Discard: CRC, header and copying, no I/O.
func BenchmarkWrite(b *testing.B) {
	for _, size := range benchSizes {
		p := bytes.Repeat([]byte{0x5a}, size)
		for _, impl := range writerImpls {
			b.Run(fmt.Sprintf("size=%d/%s", size, impl.name), func(b *testing.B) {
				w := impl.mk(io.Discard)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if err := w.write(p); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.flush(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkRead measures reading back a 4 MiB log of records of each size.
func BenchmarkRead(b *testing.B) {
	for _, size := range benchSizes {
		p := bytes.Repeat([]byte{0xa5}, size)
		n := max(1, (4<<20)/size)
		logs := map[string][]byte{}
		for _, impl := range writerImpls {
			var buf bytes.Buffer
			w := impl.mk(&buf)
			for i := 0; i < n; i++ {
				w.write(p)
			}
			w.flush()
			logs[impl.name] = buf.Bytes()
		}
		readers := []struct {
			name string
			read func(data []byte) (int, error)
		}{
			{"sievekv", func(data []byte) (int, error) {
				r := NewReader(bytes.NewReader(data), 1)
				k := 0
				for {
					if _, err := r.Next(); err == io.EOF {
						return k, nil
					} else if err != nil {
						return k, err
					}
					k++
				}
			}},
			{"pebble", func(data []byte) (int, error) {
				return drainRecords(record.NewReader(bytes.NewReader(data), 0).Next)
			}},
			{"goleveldb", func(data []byte) (int, error) {
				return drainRecords(journal.NewReader(bytes.NewReader(data), nil, true, true).Next)
			}},
		}
		for _, rd := range readers {
			b.Run(fmt.Sprintf("size=%d/%s", size, rd.name), func(b *testing.B) {
				b.SetBytes(int64(n * size))
				b.ReportAllocs()
				for b.Loop() {
					k, err := rd.read(logs[rd.name])
					if err != nil || k != n {
						b.Fatalf("read %d of %d records: %v", k, n, err)
					}
				}
			})
		}
	}
}

// drainRecords reads every record that next yields to its end, the way the
// Pebble and goleveldb log readers hand them out (each record an io.Reader
// over its payload), and returns how many it read. The sievekv reader
// returns each payload whole, so it needs no such loop.
func drainRecords(next func() (io.Reader, error)) (int, error) {
	k := 0
	var buf bytes.Buffer
	for {
		rr, err := next()
		if err == io.EOF {
			return k, nil
		} else if err != nil {
			return k, err
		}
		buf.Reset()
		if _, err := buf.ReadFrom(rr); err != nil {
			return k, err
		}
		k++
	}
}
