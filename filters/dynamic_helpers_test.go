package filters

import (
	"encoding/hex"
	"errors"
	"testing"
)

// assertGolden fails t unless f encodes to exactly the hex string golden
// (STYLE.md: pin the bytes, so a format cannot drift by accident).
func assertGolden(t *testing.T, f interface{ MarshalBinary() ([]byte, error) }, golden string) {
	t.Helper()
	if got := hex.EncodeToString(mustMarshal(t, f)); got != golden {
		t.Fatalf("encoding drifted:\n got %s\nwant %s", got, golden)
	}
}

// assertRejectsVersionAndType checks that a valid body of type typ is
// refused (ErrCorrupt) under an unknown format version, and by into's
// UnmarshalBinary when the envelope names another type.
func assertRejectsVersionAndType(t *testing.T, typ, other Type, body []byte, into interface{ UnmarshalBinary([]byte) error }) {
	t.Helper()
	if _, err := Unmarshal(sealEnvelope(typ, 2, body)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 2: err = %v", err)
	}
	if err := into.UnmarshalBinary(sealEnvelope(other, 1, body)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("wrong type: err = %v", err)
	}
}
