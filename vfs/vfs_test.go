package vfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"slices"
	"sync"
	"testing"
)

// forEachFS runs fn as a subtest on the OS file system and on MemFS, each
// with root an existing empty directory, so one battery checks both.
func forEachFS(t *testing.T, fn func(t *testing.T, fsys FS, root string)) {
	for _, c := range []struct {
		name string
		make func(t *testing.T) (FS, string)
	}{
		{"os", func(t *testing.T) (FS, string) { return Default, t.TempDir() }},
		{"mem", func(t *testing.T) (FS, string) { return NewMem(), "/db" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys, root := c.make(t)
			if err := fsys.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			fn(t, fsys, root)
		})
	}
}

func TestFSBattery(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, root string) {
		dir := fsys.PathJoin(root, "a", "b")
		if err := fsys.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := fsys.PathJoin(dir, "f")
		f, err := fsys.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"hello ", "world"} {
			if n, err := f.Write([]byte(s)); err != nil || n != len(s) {
				t.Fatalf("write: %d %v", n, err)
			}
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if st, err := f.Stat(); err != nil || st.Size() != 11 {
			t.Fatalf("stat: %v %v", st, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := fsys.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 5)
		if n, err := r.ReadAt(buf, 6); err != nil || n != 5 || string(buf) != "world" {
			t.Fatalf("ReadAt = %d %v %q", n, err, buf)
		}
		if n, err := r.ReadAt(buf, 8); n != 3 || err != io.EOF {
			t.Fatalf("short ReadAt = %d %v", n, err)
		}
		if _, err := r.Write([]byte("x")); err == nil {
			t.Fatal("write to read-only file succeeded")
		}
		r.Close()
		if st, err := fsys.Stat(p); err != nil || st.Size() != 11 || st.IsDir() {
			t.Fatalf("FS.Stat: %v %v", st, err)
		}
		if err := fsys.Rename(p, fsys.PathJoin(dir, "g")); err != nil {
			t.Fatal(err)
		}
		names, err := fsys.List(dir)
		if err != nil || !slices.Equal(names, []string{"g"}) {
			t.Fatalf("List = %v %v", names, err)
		}
		if names, _ := fsys.List(fsys.PathJoin(root, "a")); !slices.Equal(names, []string{"b"}) {
			t.Fatalf("List parent = %v", names)
		}
		if _, err := fsys.Open(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("open of renamed-away file: %v", err)
		}
		// Create truncates.
		f, _ = fsys.Create(fsys.PathJoin(dir, "g"))
		f.Close()
		if st, _ := fsys.Stat(fsys.PathJoin(dir, "g")); st.Size() != 0 {
			t.Fatalf("Create did not truncate: %d", st.Size())
		}
		d, err := fsys.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		d.Close()
		if err := fsys.Remove(fsys.PathJoin(dir, "g")); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Remove(fsys.PathJoin(dir, "g")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("second Remove: %v", err)
		}
		if _, err := fsys.Create(fsys.PathJoin(root, "nodir", "x")); err == nil {
			t.Fatal("Create in a missing directory succeeded")
		}
	})
}

// TestMemCrashClone checks V1: only synced bytes under synced names survive.
func TestMemCrashClone(t *testing.T) {
	m := NewMem()
	m.MkdirAll("/d", 0o755)
	write := func(name string, s string, sync bool) {
		f, err := m.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(s))
		if sync {
			f.Sync()
		}
		f.Close()
	}
	write("/d/synced", "abc", true)
	write("/d/unsynced", "xyz", false)
	f, _ := m.Create("/d/partial")
	f.Write([]byte("12"))
	f.Sync()
	f.Write([]byte("34"))

	// Nothing was bound durably yet: the directory was never synced.
	if names, _ := m.CrashClone().List("/d"); len(names) != 0 {
		t.Fatalf("before dir sync, crash kept %v", names)
	}
	d, _ := m.OpenDir("/d")
	d.Sync()
	c := m.CrashClone()
	read := func(fsys FS, name string) string {
		f, err := fsys.Open(name)
		if err != nil {
			return "<" + err.Error() + ">"
		}
		st, _ := f.Stat()
		b := make([]byte, st.Size())
		f.ReadAt(b, 0)
		return string(b)
	}
	for name, want := range map[string]string{"/d/synced": "abc", "/d/unsynced": "", "/d/partial": "12"} {
		if got := read(c, name); got != want {
			t.Errorf("after crash %s = %q, want %q", name, got, want)
		}
	}
	// A rename is durable only after the directory sync.
	m.Rename("/d/synced", "/d/renamed")
	c = m.CrashClone()
	if read(c, "/d/synced") != "abc" {
		t.Fatal("unsynced rename took effect after crash")
	}
	d.Sync()
	c = m.CrashClone()
	if read(c, "/d/renamed") != "abc" {
		t.Fatal("synced rename lost")
	}
	if _, err := c.Open("/d/synced"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("old name survived a synced rename")
	}
	// The live FS is untouched.
	if read(m, "/d/partial") != "1234" {
		t.Fatal("CrashClone changed the live FS")
	}
}

// TestCountingFS checks V3 under concurrent readers (run with -race).
func TestCountingFS(t *testing.T) {
	c := NewCounting(NewMem())
	f, _ := c.Create("/t")
	f.Write(bytes.Repeat([]byte{7}, 100))
	f.Close()
	r, _ := c.Open("/t")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := make([]byte, 10)
			for i := range 10 {
				r.ReadAt(b, int64(i*10))
			}
			r.ReadAt(b, 95) // short: counts 5 bytes
		}()
	}
	wg.Wait()
	want := ReadStats{Calls: 88, Bytes: 8 * 105}
	if got := c.Reads("/t"); got != want {
		t.Fatalf("Reads = %+v, want %+v", got, want)
	}
	if got := c.Total(nil); got != want {
		t.Fatalf("Total = %+v", got)
	}
	if got := c.Total(func(string) bool { return false }); got != (ReadStats{}) {
		t.Fatalf("Total(none) = %+v", got)
	}
	c.Reset()
	if got := c.Reads("/t"); got != (ReadStats{}) {
		t.Fatalf("after Reset %+v", got)
	}
}

// A closed File refuses ReadAt and Stat on both file systems, as it
// refuses Write and Sync: MemFS once served them, so a use after Close
// passed every MemFS test and failed only on disk.
func TestClosedFileRefusesReads(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, root string) {
		p := fsys.PathJoin(root, "f")
		f, err := fsys.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		var b [3]byte
		if _, err := f.ReadAt(b[:], 0); err == nil {
			t.Error("ReadAt after Close succeeded")
		}
		if _, err := f.Stat(); err == nil {
			t.Error("Stat after Close succeeded")
		}
		if err := f.Close(); err == nil {
			t.Error("second Close succeeded")
		}
	})
}

// The empty name is no file on either file system: MemFS once cleaned it
// to ".", so Open, Stat, List and MkdirAll of "" succeeded on the root
// there and failed on disk.
func TestEmptyNameIsNoFile(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, root string) {
		ops := map[string]func() error{
			"Create":      func() error { _, err := fsys.Create(""); return err },
			"Open":        func() error { _, err := fsys.Open(""); return err },
			"OpenDir":     func() error { _, err := fsys.OpenDir(""); return err },
			"Stat":        func() error { _, err := fsys.Stat(""); return err },
			"List":        func() error { _, err := fsys.List(""); return err },
			"MkdirAll":    func() error { return fsys.MkdirAll("", 0o755) },
			"Remove":      func() error { return fsys.Remove("") },
			"Lock":        func() error { _, err := fsys.Lock(""); return err },
			"RLock":       func() error { _, err := fsys.RLock(""); return err },
			"Rename from": func() error { return fsys.Rename("", fsys.PathJoin(root, "x")) },
		}
		for name, op := range ops {
			if err := op(); err == nil {
				t.Errorf("%s(\"\") succeeded", name)
			}
		}
		f, err := fsys.Create(fsys.PathJoin(root, "f"))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := fsys.Rename(fsys.PathJoin(root, "f"), ""); err == nil {
			t.Error(`Rename(f, "") succeeded`)
		}
	})
}
