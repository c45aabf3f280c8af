package benchreport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

const interruptChildEnv = "BENCHREPORT_INTERRUPT_CHILD"

// TestMain lets TestInterruptRemovesTempDirs run this test binary as a
// benchmark program: Main with a run that makes a TempDir and waits.
func TestMain(m *testing.M) {
	if os.Getenv(interruptChildEnv) != "" {
		os.Args = os.Args[:1]
		Main("child", func(_ []string, stdout, _ io.Writer) error {
			dir, remove, err := TempDir("benchreport-interrupt-")
			if err != nil {
				return err
			}
			defer remove()
			if err := os.WriteFile(dir+"/db", []byte("data"), 0o644); err != nil {
				return err
			}
			fmt.Fprintln(stdout, dir)
			time.Sleep(time.Minute)
			return errors.New("not interrupted")
		})
		return
	}
	os.Exit(m.Run())
}

// TestInterruptRemovesTempDirs: a benchmark program stopped by SIGINT or
// SIGTERM mid-run removes the temp directory its run made (it exited at
// once and left the run's databases behind) and exits with 128 + the
// signal, not 0.
func TestInterruptRemovesTempDirs(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), interruptChildEnv+"=1")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		dir := strings.TrimSpace(line)
		if err != nil || dir == "" {
			cmd.Process.Kill()
			t.Fatalf("child printed %q: %v", line, err)
		}
		cmd.Process.Signal(sig)
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
			t.Errorf("%v: exit %v, want status %d", sig, err, 128+int(sig))
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			os.RemoveAll(dir)
			t.Errorf("%v: %s still there after the interrupt (%v)", sig, dir, err)
		}
	}
}
