package filters

import (
	"errors"
	"testing"
)

// assertRejectsVersionAndType checks that a valid body of type typ is
// refused (ErrCorrupt) under an unknown format version, and by into's
// UnmarshalBinary when the envelope names another type.
func assertRejectsVersionAndType(t *testing.T, typ, other filterType, body []byte, into interface{ UnmarshalBinary([]byte) error }) {
	t.Helper()
	if _, err := Unmarshal(sealEnvelope(typ, 2, body)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 2: err = %v", err)
	}
	if err := into.UnmarshalBinary(sealEnvelope(other, 1, body)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("wrong type: err = %v", err)
	}
}
