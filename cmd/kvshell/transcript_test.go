package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil/golden"
	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// A transcript (testdata/*.txt) is a shell session as a person would see
// it. Lines before the first step are comments ('#'). Each step is one
// input line followed by the output it must produce, up to the next step:
//
//	> COMMAND LINE        typed at the prompt; errors show as "error: ..."
//	!! DIRECTIVE          acts on the harness, not the shell:
//	     json on|off            switch -json output
//	     reopen [FLAGS]         close and reopen (-readonly, -filter NAME,
//	                            -dir DIR to open another database)
//	     open-again             open the DB a second time (the lock error)
//	     corrupt-tables OFFSET  close, flip the byte at OFFSET of every
//	                            table file, reopen
//
// Each transcript runs against a fresh database on an in-memory file
// system, with a clock that advances 125ms per reading, so file numbers,
// sizes, counters and load rates are the same on every run. Regenerate
// after a deliberate change with: go test ./cmd/kvshell -run Transcript -update
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			runTranscript(t, f)
		})
	}
}

type step struct {
	input string // including its "> " or "!! " marker
	want  []string
}

func parseTranscript(t *testing.T, data string) (header []string, steps []step) {
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	for _, l := range lines {
		isStep := strings.HasPrefix(l, "> ") || l == ">" || strings.HasPrefix(l, "!! ")
		switch {
		case isStep:
			steps = append(steps, step{input: l})
		case len(steps) == 0:
			if l != "" && !strings.HasPrefix(l, "#") {
				t.Fatalf("line %q before the first step is not a comment", l)
			}
			header = append(header, l)
		default:
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
		}
	}
	return header, steps
}

// session is the harness's side of a transcript: the file system, the open
// DB and the interpreter over it.
type session struct {
	t     *testing.T
	fs    *vfs.MemFS
	db    *kv.DB
	in    *Interp
	out   bytes.Buffer
	json  bool
	clock time.Time
}

const transcriptDir = "db"

func (s *session) open(cfg *config) error {
	filter, err := kv.ParseFilterType(cfg.filter)
	if err != nil {
		return err
	}
	db, err := kv.Open(cfg.dir, &kv.Options{FS: s.fs, Filter: filter, ReadOnly: cfg.readOnly})
	if err != nil {
		return fmt.Errorf("%s", describeOpenError(cfg, err))
	}
	s.db = db
	s.in = NewInterp(db, &s.out, io.Discard)
	s.in.json, s.in.readOnly = s.json, cfg.readOnly
	s.in.now = func() time.Time {
		s.clock = s.clock.Add(125 * time.Millisecond)
		return s.clock
	}
	return nil
}

func (s *session) close() {
	if s.db == nil {
		return
	}
	if err := s.db.Close(); err != nil {
		fmt.Fprintf(&s.out, "close error: %v\n", err)
	}
	s.db, s.in = nil, nil
}

func (s *session) directive(d string) {
	f := strings.Fields(d)
	switch {
	case len(f) == 2 && f[0] == "json":
		s.json = f[1] == "on"
		if s.in != nil {
			s.in.json = s.json
		}
	case len(f) >= 1 && f[0] == "reopen":
		s.close()
		cfg, err := parseFlags(append([]string{"-dir", transcriptDir}, f[1:]...), &s.out)
		if err != nil {
			s.t.Fatalf("directive %q: %v", d, err)
		}
		if err := s.open(cfg); err != nil {
			fmt.Fprintf(&s.out, "open error: %v\n", err)
		}
	case len(f) == 1 && f[0] == "open-again":
		cfg := &config{dir: transcriptDir, filter: kv.FilterBinaryFuse8.String()}
		_, err := kv.Open(transcriptDir, &kv.Options{FS: s.fs})
		if err == nil {
			s.t.Fatalf("a second Open of an open DB succeeded")
		}
		fmt.Fprintf(&s.out, "open error: %s\n", describeOpenError(cfg, err))
	case len(f) == 2 && f[0] == "corrupt-tables":
		off, err := strconv.Atoi(f[1])
		if err != nil {
			s.t.Fatalf("directive %q: %v", d, err)
		}
		s.close()
		s.corruptTables(int64(off))
		if err := s.open(&config{dir: transcriptDir, filter: kv.FilterBinaryFuse8.String()}); err != nil {
			fmt.Fprintf(&s.out, "open error: %v\n", err)
		}
	default:
		s.t.Fatalf("unknown directive %q", d)
	}
}

// corruptTables flips one byte of every table file, rewriting it through
// the FS (MemFS has no in-place write).
func (s *session) corruptTables(off int64) {
	names, err := s.fs.List(transcriptDir)
	if err != nil {
		s.t.Fatal(err)
	}
	n := 0
	for _, name := range names {
		if !strings.HasSuffix(name, ".sst") {
			continue
		}
		path := s.fs.PathJoin(transcriptDir, name)
		f, err := s.fs.Open(path)
		if err != nil {
			s.t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			s.t.Fatal(err)
		}
		data := make([]byte, st.Size())
		if _, err := f.ReadAt(data, 0); err != nil && err != io.EOF {
			s.t.Fatal(err)
		}
		f.Close()
		if off >= int64(len(data)) {
			s.t.Fatalf("corrupt-tables: offset %d beyond %s (%d bytes)", off, name, len(data))
		}
		data[off] ^= 0xff
		w, err := s.fs.Create(path)
		if err != nil {
			s.t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			s.t.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			s.t.Fatal(err)
		}
		w.Close()
		n++
	}
	if n == 0 {
		s.t.Fatalf("corrupt-tables: no table files (flush first)")
	}
}

func runTranscript(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, steps := parseTranscript(t, string(data))
	s := &session{t: t, fs: vfs.NewMem(), clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := s.open(&config{dir: transcriptDir, filter: kv.FilterBinaryFuse8.String()}); err != nil {
		t.Fatal(err)
	}
	defer s.close()

	var got strings.Builder
	for _, l := range header {
		got.WriteString(l + "\n")
	}
	failed := false
	for _, st := range steps {
		s.out.Reset()
		switch {
		case strings.HasPrefix(st.input, "!! "):
			s.directive(strings.TrimPrefix(st.input, "!! "))
		case s.in == nil:
			fmt.Fprintf(&s.out, "(no database open)\n")
		default:
			line := strings.TrimPrefix(strings.TrimPrefix(st.input, ">"), " ")
			switch err := s.in.Exec(context.Background(), line); {
			case err == errQuit:
				fmt.Fprintf(&s.out, "(the shell would exit here)\n")
			case err != nil:
				fmt.Fprintf(&s.out, "error: %s\n", err)
			}
		}
		out := strings.TrimSuffix(s.out.String(), "\n")
		var lines []string
		if out != "" || strings.HasSuffix(s.out.String(), "\n") && s.out.Len() > 0 {
			lines = strings.Split(out, "\n")
		}
		got.WriteString(st.input + "\n")
		for _, l := range lines {
			got.WriteString(l + "\n")
		}
		if !golden.Updating() && strings.Join(lines, "\n") != strings.Join(st.want, "\n") {
			failed = true
			t.Errorf("%s: step %q\n--- got ---\n%s\n--- want ---\n%s", path, st.input,
				strings.Join(lines, "\n"), strings.Join(st.want, "\n"))
		}
	}
	if golden.Updating() {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if failed {
		t.Logf("if the new output is right: go test ./cmd/kvshell -run Transcript -update")
	}
}
