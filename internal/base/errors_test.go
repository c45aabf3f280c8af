package base

import (
	"errors"
	"testing"
)

func TestFirstErrorKeepsTheFirstFailure(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	var f FirstError
	if f.Err() != nil {
		t.Fatalf("zero value: %v", f.Err())
	}
	f.Keep(nil)
	f.Keep(a)
	f.Keep(nil)
	f.Keep(b)
	if f.Err() != a {
		t.Fatalf("kept %v, want a", f.Err())
	}
	if err := FirstOf(nil, b, a); err != b {
		t.Fatalf("FirstOf: %v, want b", err)
	}
	if err := FirstOf(nil, nil); err != nil {
		t.Fatalf("FirstOf of no failure: %v", err)
	}
	ran := 0
	step := func(err error) error { ran++; return err }
	if err := FirstOf(step(a), step(nil), step(b)); err != a || ran != 3 {
		t.Fatalf("FirstOf: %v after %d steps, want a after 3", err, ran)
	}
}
