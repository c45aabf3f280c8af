package testutil

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// childTestEnv makes TestChild the child: "lines DIR" prints three lines,
// creates DIR/printed and waits to be killed; "exit" prints one line and
// exits with status 3.
const childTestEnv = "SIEVEKV_TESTUTIL_CHILD"

// TestChild checks the kill harness the crash tests share: the parent reads
// what the child printed, including lines it printed just before the kill,
// Kill succeeds on a child the signal ended, and it reports a child that
// ended by itself instead of passing it off as killed.
func TestChild(t *testing.T) {
	mode, dir, _ := strings.Cut(os.Getenv(childTestEnv), " ")
	switch mode {
	case "lines":
		for i := range 3 {
			fmt.Printf("line %d\n", i)
		}
		os.WriteFile(filepath.Join(dir, "printed"), nil, 0o644)
		time.Sleep(time.Minute)
		os.Exit(0)
	case "exit":
		fmt.Println("bye")
		fmt.Fprintln(os.Stderr, "leaving on my own")
		os.Exit(3)
	}

	dir = t.TempDir()
	c := StartChild(t, childTestEnv, "lines "+dir, "-test.run=^TestChild$")
	sc := bufio.NewScanner(c.Stdout)
	if !sc.Scan() || sc.Text() != "line 0" {
		t.Fatalf("first line %q, %v", sc.Text(), sc.Err())
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "printed")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child did not print its lines in a minute")
		}
	}
	if err := c.Kill(); err != nil {
		t.Fatalf("Kill of a live child: %v", err)
	}
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	if got := strings.Join(rest, ","); got != "line 1,line 2" {
		t.Fatalf("lines after the kill: %q, want the two the child printed before it", got)
	}

	c = StartChild(t, childTestEnv, "exit", "-test.run=^TestChild$")
	<-c.Exited()
	err := c.Kill()
	if err == nil || !strings.Contains(err.Error(), "leaving on my own") {
		t.Fatalf("Kill of a child that exited by itself = %v, want an error with its stderr", err)
	}
	if c.Wait() == nil {
		t.Fatal("Wait of a child that exited with status 3 = nil")
	}
}
