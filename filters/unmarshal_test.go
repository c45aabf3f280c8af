package filters

import (
	"errors"
	"testing"
)

// unmarshalNew decodes data with a new *T's own UnmarshalBinary and returns
// it as I, the interface a battery holds its filters by (Filter,
// staticFilter, bloomFamilyFilter); the value is returned with the error,
// as UnmarshalBinary leaves it, so a battery can check both. It is every
// battery's per-type decode hook: unmarshalNew[staticFilter, Xor8].
func unmarshalNew[I any, T any, PT interface {
	*T
	UnmarshalBinary(data []byte) error
}](data []byte) (I, error) {
	f := PT(new(T))
	err := f.UnmarshalBinary(data)
	return any(f).(I), err
}

// assertBodies seals each body under a valid envelope of typ and version, so
// the checksum passes, and checks that Unmarshal refuses every one of
// rejected with ErrCorrupt (the structural checks behind the checksum, F3)
// and accepts every one of accepted: the controls, without which a case list
// failing for an unrelated reason would pass.
func assertBodies(t *testing.T, typ Type, version uint8, rejected, accepted map[string][]byte) {
	t.Helper()
	for name, b := range rejected {
		if _, err := Unmarshal(sealEnvelope(typ, version, b)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	for name, b := range accepted {
		if _, err := Unmarshal(sealEnvelope(typ, version, b)); err != nil {
			t.Errorf("control %s refused: %v", name, err)
		}
	}
}
