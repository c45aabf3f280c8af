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

// TestZeroValueMarshalIsDecodableOrRefused: MarshalBinary promises an
// encoding Unmarshal decodes, so a zero-value filter either encodes one (the
// empty Xor8 and 8/16-bit fuse filters) or is refused with
// ErrInvalidArgument, as the Bloom family does. The other filters used to
// encode width 0 or q = 0 silently, bytes every decoder then rejected as
// corrupt: a zero filter persisted without error was unreadable.
func TestZeroValueMarshalIsDecodableOrRefused(t *testing.T) {
	zeros := []Filter{
		new(Bloom), new(BlockedBloom), new(CountingBloom), new(ScalableBloom),
		new(Xor8), new(BinaryFuse8), new(BinaryFuse16), new(BinaryFuse), new(Ribbon),
		new(Cuckoo), new(Vacuum), new(Quotient), new(CountingQuotient),
		new(VectorQuotient), new(Morton), new(RangeFilter),
	}
	for _, f := range zeros {
		enc, err := f.MarshalBinary()
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%T zero value: MarshalBinary error %v does not wrap ErrInvalidArgument", f, err)
			}
			continue
		}
		if _, err := Unmarshal(enc); err != nil {
			t.Errorf("%T zero value: MarshalBinary succeeded but Unmarshal fails: %v", f, err)
		}
	}
}
