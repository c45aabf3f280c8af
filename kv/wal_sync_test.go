package kv

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// syncGateFS holds the Sync of one file until the test opens the gate.
type syncGateFS struct {
	vfs.FS
	mu      sync.Mutex
	name    string        // the file whose Sync waits
	gate    chan struct{} // closed to let it through
	reached chan struct{} // closed when that Sync has started
}

type gatedFile struct {
	vfs.File
	fs   *syncGateFS
	name string
}

func (fs *syncGateFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &gatedFile{File: f, fs: fs, name: name}, nil
}

// hold makes the Sync of name wait until the returned release is called.
func (fs *syncGateFS) hold(name string) (reached <-chan struct{}, release func()) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.name, fs.gate, fs.reached = name, make(chan struct{}), make(chan struct{})
	gate := fs.gate
	return fs.reached, sync.OnceFunc(func() { close(gate) })
}

func (f *gatedFile) Sync() error {
	f.fs.mu.Lock()
	gate, reached := f.fs.gate, f.fs.reached
	held := f.name == f.fs.name
	if held {
		f.fs.name = "" // once
	}
	f.fs.mu.Unlock()
	if held {
		close(reached)
		<-gate
	}
	return f.File.Sync()
}

// within runs fn and reports whether it returned within d.
func within(d time.Duration, fn func()) bool {
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// TestSyncAfterRotationWaitsForOldLogSync checks K11's writer half: the
// rotation leaves the old log's fdatasync to the background, so neither it
// nor a NoSync write waits for that sync, but a Sync write in the new log
// is not acknowledged until the old log is durable (else a power loss
// could keep the synced write and tear the older log before it).
func TestSyncAfterRotationWaitsForOldLogSync(t *testing.T) {
	fs := &syncGateFS{FS: vfs.NewMem()}
	d := openMem(t, fs, &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	if err := d.Set([]byte("a"), []byte("1"), NoSync); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	old := d.path(fileKindLog, d.mem.logNum)
	d.mu.Unlock()
	reached, release := fs.hold(old)
	defer release()

	if !within(5*time.Second, func() {
		if err := d.asLeader(d.rotateMemTableLocked); err != nil {
			t.Error(err)
		}
	}) {
		t.Fatal("the rotation waited for the old log's sync")
	}
	<-reached
	if !within(5*time.Second, func() {
		if err := d.Set([]byte("b"), []byte("2"), NoSync); err != nil {
			t.Error(err)
		}
	}) {
		t.Fatal("a NoSync write waited for the old log's sync")
	}
	synced := make(chan error, 1)
	go func() { synced <- d.Set([]byte("c"), []byte("3"), Sync) }()
	select {
	case err := <-synced:
		t.Fatalf("a Sync write returned (%v) before the old log was durable", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	returnedWithin(t, synced, 5*time.Second, "the Sync write did not return once the old log was durable")
}

// TestRetiredLogSyncFailureIsSticky checks that a failed background sync
// of a retired log stops the DB taking writes, as a failed sync under the
// rotation did: the log's tail is unknown, so no later write may be
// acknowledged over it, and Close reports the failure.
func TestRetiredLogSyncFailureIsSticky(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpSync)
	d := openMem(t, efs, &Options{DisableAutomaticCompactions: true})
	if err := d.Set([]byte("a"), []byte("1"), NoSync); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	old := d.path(fileKindLog, d.mem.logNum)
	d.mu.Unlock()
	efs.SetMatch(func(op errorfs.Op, name string) bool { return name == old })
	efs.Reset()
	efs.FailAt(1, false)
	if err := d.asLeader(d.rotateMemTableLocked); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	s := d.lastLogSync
	d.mu.Unlock()
	if err := s.wait(); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("the retired log's sync: %v, want the injected failure", err)
	}
	// The DB goes read-only just after the sync reports.
	deadline := time.Now().Add(5 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = d.Set([]byte("b"), []byte("2"), NoSync); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(err, ErrReadOnly) || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("write after the failed sync: %v, want ErrReadOnly wrapping the injected failure", err)
	}
	if err := d.Close(); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Close: %v, want the injected failure", err)
	}
}
