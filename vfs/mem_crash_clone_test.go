package vfs

import (
	"testing"
	"time"
)

// TestMemCrashCloneSyncDuringClone is the interleaving that made
// tests/powerloss_test.go fail now and then: CrashClone copied the WAL the
// engine was rotating away from, then the commit leader synced that WAL's
// last unsynced batch, wrote the next batch to the new WAL and synced it,
// and only then did CrashClone copy the new WAL. The clone held the later
// batch without the earlier one, a state no power loss can leave (V1:
// the first Sync returned before the second began). The afterCloneNode
// seam runs those two Syncs right after the first file is copied; a clone
// atomic with respect to Sync either sees both or, as here, neither.
func TestMemCrashCloneSyncDuringClone(t *testing.T) {
	m := NewMem()
	m.MkdirAll("/d", 0o755)
	files := map[string]File{}
	for _, name := range []string{"/d/a", "/d/b"} {
		f, err := m.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("synced;"))
		f.Sync()
		files[name] = f
	}
	d, _ := m.OpenDir("/d")
	d.Sync()
	// Both files have an unsynced tail; the first one the clone copies is
	// synced next, then the other one gets a write that depends on it.
	for _, f := range files {
		f.Write([]byte("earlier;"))
	}

	var first, second string
	syncsDone := make(chan struct{})
	m.afterCloneNode = func(name string) {
		if first != "" {
			return
		}
		first = name
		for other := range files {
			if other != name {
				second = other
			}
		}
		go func() {
			defer close(syncsDone)
			files[first].Sync()
			files[second].Write([]byte("later;"))
			files[second].Sync()
		}()
		// With Syncs excluded during the clone this wait times out;
		// without, both Syncs finish here, before second is copied.
		select {
		case <-syncsDone:
		case <-time.After(50 * time.Millisecond):
		}
	}
	c := m.CrashClone()
	<-syncsDone
	m.afterCloneNode = nil

	read := func(fsys FS, name string) string {
		f, err := fsys.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		b := make([]byte, st.Size())
		f.ReadAt(b, 0)
		return string(b)
	}
	gotFirst, gotSecond := read(c, first), read(c, second)
	hasLater := gotSecond == "synced;earlier;later;"
	hasEarlier := gotFirst == "synced;earlier;"
	if hasLater && !hasEarlier {
		t.Fatalf("clone holds %s = %q (a write synced after %s's last Sync) but %s = %q: not a state a power loss can leave",
			second, gotSecond, first, first, gotFirst)
	}
	// The live FS got both Syncs.
	if got := read(m.CrashClone(), second); got != "synced;earlier;later;" {
		t.Fatalf("after the clone %s = %q", second, got)
	}
}
