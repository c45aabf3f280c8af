package testutil

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// childTimeout bounds a child's life: it is killed then even if its
// parent, stuck or failed, never does.
const childTimeout = 2 * time.Minute

// Child is a copy of the running test binary that a crash test starts as
// the process it kills with SIGKILL: the child learns its part from the
// environment variable the parent sets, writes, and reports what it has
// acknowledged on its stdout (or in a file); the parent kills it at a
// chosen moment and then checks what survived.
type Child struct {
	// Stdout is the child's standard output. It is a pipe the child alone
	// writes, so it reads to EOF once the child is dead, and every line the
	// child wrote before the kill can still be read after it. A child that
	// writes more than a pipe holds blocks until the parent reads; the
	// parent may close Stdout early (it is closed when the test ends).
	Stdout *os.File

	cmd    *exec.Cmd
	stderr bytes.Buffer
	exited chan struct{} // closed once cmd.Wait returned
	err    error         // cmd.Wait's result, set before exited closes
}

// StartChild runs the test binary again with args (say "-test.run=^TestX$")
// and env=value added to its environment, its stdout piped to the parent
// and its stderr kept for messages. When the test ends the child is killed
// if it still runs, so a failing test leaves no process behind.
func StartChild(t testing.TB, env, value string, args ...string) *Child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	c := &Child{cmd: exec.CommandContext(ctx, exe, args...), exited: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), env+"="+value)
	c.cmd.Stderr = &c.stderr
	// An *os.File rather than cmd.StdoutPipe: Wait closes the reading end
	// of the pipe it made, possibly before the parent has read what the
	// child wrote just before it died.
	r, w, err := os.Pipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c.cmd.Stdout = w
	err = c.cmd.Start()
	w.Close()
	if err != nil {
		cancel()
		r.Close()
		t.Fatal(err)
	}
	c.Stdout = r
	go func() {
		c.err = c.cmd.Wait()
		cancel()
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.exited
		r.Close()
	})
	return c
}

// Exited is closed once the child has ended, for any reason.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// Wait waits for the child to end and returns how it ended (exec.Cmd.Wait).
func (c *Child) Wait() error {
	<-c.exited
	return c.err
}

// Stderr waits for the child to end and returns what it wrote on stderr.
func (c *Child) Stderr() string {
	<-c.exited
	return c.stderr.String()
}

// Kill sends the child SIGKILL and waits for it to end. It returns an error
// unless the signal is what ended it: a child that died of its own accord
// first (an error, a panic) has not tested a kill.
func (c *Child) Kill() error {
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill the child: %v (it ended with %v)\n%s", err, c.Wait(), c.Stderr())
	}
	err := c.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		return fmt.Errorf("the child was not killed but ended with %v\n%s", err, c.Stderr())
	}
	return nil
}
