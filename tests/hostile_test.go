package tests

import (
	"errors"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
)

// The hostile cases: the engine used as a careless or hostile caller would
// use it (misused API, odd directory contents, racing Close, exhausted
// resources). Each test is one case, named after what it caught or guards,
// and each demands a clear typed error or correct behaviour, with nothing
// acknowledged lost and the DB still opening afterwards. docs/reliability.md
// lists them with what they found.

func TestHostileOpenEmptyDirname(t *testing.T) {
	_, err := kv.Open("", nil)
	if !errors.Is(err, kv.ErrInvalidArgument) {
		t.Fatalf("Open(\"\") = %v, want ErrInvalidArgument", err)
	}
	if !strings.Contains(err.Error(), "directory name is empty") {
		t.Fatalf("Open(\"\") error %q does not say the directory name is empty", err)
	}
}
