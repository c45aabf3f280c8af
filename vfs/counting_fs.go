package vfs

import (
	"sync"
	"sync/atomic"
)

// ReadStats counts ReadAt calls and the bytes they returned.
type ReadStats struct {
	Calls int64
	Bytes int64
}

// Counting wraps an FS and counts ReadAt calls and bytes per file name (V3),
// the name being exactly the string passed to Open or Create. It is how
// tests and benchmarks check what the read path really did, independent of
// the engine's own counters.
type Counting struct {
	FS
	mu sync.Mutex
	// files is guarded by mu; the counters inside are atomic.
	files map[string]*readCounter
}

type readCounter struct {
	calls, bytes atomic.Int64
}

// NewCounting wraps fs.
func NewCounting(fs FS) *Counting {
	return &Counting{FS: fs, files: map[string]*readCounter{}}
}

func (c *Counting) counter(name string) *readCounter {
	c.mu.Lock()
	defer c.mu.Unlock()
	rc := c.files[name]
	if rc == nil {
		rc = &readCounter{}
		c.files[name] = rc
	}
	return rc
}

// Create implements FS; reads through the returned file are counted.
func (c *Counting) Create(name string) (File, error) {
	f, err := c.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, rc: c.counter(name)}, nil
}

// Open implements FS; reads through the returned file are counted.
func (c *Counting) Open(name string) (File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, rc: c.counter(name)}, nil
}

// Reads returns the counts for one file name.
func (c *Counting) Reads(name string) ReadStats {
	c.mu.Lock()
	rc := c.files[name]
	c.mu.Unlock()
	if rc == nil {
		return ReadStats{}
	}
	return ReadStats{Calls: rc.calls.Load(), Bytes: rc.bytes.Load()}
}

// Total sums the counts of every file for which match returns true (all
// files if match is nil).
func (c *Counting) Total(match func(name string) bool) ReadStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s ReadStats
	for name, rc := range c.files {
		if match == nil || match(name) {
			s.Calls += rc.calls.Load()
			s.Bytes += rc.bytes.Load()
		}
	}
	return s
}

// Reset zeroes every count.
func (c *Counting) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rc := range c.files {
		rc.calls.Store(0)
		rc.bytes.Store(0)
	}
}

type countingFile struct {
	File
	rc *readCounter
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.rc.calls.Add(1)
	f.rc.bytes.Add(int64(n))
	return n, err
}
