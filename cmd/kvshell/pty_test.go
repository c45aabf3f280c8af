package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// terminal is the test's end of a pseudo-terminal running kvshell: it
// records everything the shell draws and waits for text to appear.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex
	buf  bytes.Buffer
	pos  int // expect searches from here: what earlier expects matched is spent
	done chan struct{}
}

// startTerminal runs kvshell under a pty; it skips the test when this
// machine cannot give one (a container without /dev/ptmx, say).
func startTerminal(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(kvshellBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	tm := &terminal{t: t, cmd: cmd, ptmx: ptmx, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			tm.mu.Lock()
			tm.buf.Write(b[:n])
			tm.mu.Unlock()
			if err != nil {
				return // EIO once the shell exits
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		ptmx.Close()
	})
	return tm
}

func (tm *terminal) send(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.ptmx, s); err != nil {
		tm.t.Fatalf("write to terminal: %v", err)
	}
}

// expect waits until want appears after what earlier expects consumed.
func (tm *terminal) expect(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		tm.mu.Lock()
		screen := tm.buf.String()
		i := strings.Index(screen[tm.pos:], want)
		if i >= 0 {
			tm.pos += i + len(want)
		}
		tm.mu.Unlock()
		if i >= 0 {
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waited 15s for %q; the terminal shows after the last match:\n%q", want, screen[tm.pos:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (tm *terminal) wait() int {
	tm.t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- tm.cmd.Wait() }()
	select {
	case err := <-exited:
		<-tm.done
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			tm.t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(15 * time.Second):
		tm.t.Fatalf("kvshell did not exit; the terminal shows:\n%q", tm.buf.String())
		return -1
	}
}

const (
	upArrow   = "\x1b[A"
	backspace = "\x7f"
	ctrlD     = "\x04"
	ctrlC     = "\x03"
)

// TestTerminalSession types at a real (pseudo-)terminal: commands, an
// error that must not end the session, tab completion, editing a line
// recalled with the up arrow, Ctrl-D, and history carried into a second
// session. Values are typed in hex so that the decoded text the shell
// prints ("zorp") cannot be mistaken for the echo of the typing.
func TestTerminalSession(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "db")
	hist := filepath.Join(tmp, "history")
	env := []string{"TERM=xterm", historyEnv + "=" + hist}

	tm := startTerminal(t, env, "-dir", dir)
	tm.expect(promptText)
	tm.send("put k 0x7a6f7270\r") // "zorp"
	tm.expect("OK")
	tm.expect(promptText)
	tm.send("get k\r")
	tm.expect("zorp")
	tm.expect(promptText)
	tm.send("gte k\r")
	tm.expect(`error: unknown command gte (did you mean "get"?)`)
	tm.expect(promptText)
	// Up arrow three times: back past "gte k" and "get k" to the put.
	// Rewrite its last hex digit so the value becomes "zorq".
	tm.send(upArrow)
	tm.expect("gte k")
	tm.send(upArrow)
	tm.expect("get k")
	tm.send(upArrow)
	tm.expect("put k 0x7a6f7270")
	tm.send(backspace + "1\r")
	tm.expect("OK")
	tm.expect(promptText)
	tm.send("get k\r")
	tm.expect("zorq")
	tm.expect(promptText)
	// Tab completes "fl" to flush.
	tm.send("fl\t")
	tm.expect("flush")
	tm.send("\r")
	tm.expect("OK")
	tm.expect(promptText)
	tm.send("tables\r")
	tm.expect("L0")
	tm.expect(promptText)
	// Ctrl-C stops a long load (its progress bar is on the terminal) and
	// the session goes on.
	tm.send("load 50000000 1\r")
	tm.expect("loading")
	tm.send(ctrlC)
	tm.expect("error: load: interrupted after")
	tm.expect(promptText)
	tm.send("get k\r")
	tm.expect("zorq")
	tm.expect(promptText)
	tm.send(ctrlD)
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit status %d after Ctrl-D", code)
	}
	h, err := os.ReadFile(hist)
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	if !strings.Contains(string(h), "put k 0x7a6f7271\n") || !strings.HasSuffix(string(h), "get k\n") {
		t.Fatalf("history file holds:\n%s", h)
	}

	// A new session recalls the last line of the previous one.
	tm = startTerminal(t, env, "-dir", dir)
	tm.expect(promptText)
	tm.send(upArrow)
	tm.expect("get k")
	tm.send(upArrow)
	tm.expect("load 50000000 1")
	tm.send(strings.Repeat(backspace, len("load 50000000 1")) + "get k\r")
	tm.expect("zorq")
	tm.expect(promptText)
	tm.send("quit\r")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit status %d after quit", code)
	}
}
