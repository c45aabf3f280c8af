package manifest

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode: it must never panic, must
// reject with ErrCorruption, and anything it accepts must be a valid edit
// whose canonical encoding is exactly the input (M1, M2). Accepted edits are
// also folded, which must not panic either.
func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 8; i++ {
		f.Add(randEdit(rng).Encode())
	}
	f.Add([]byte{})
	f.Add(uv(tagDeletedTable, 1, 4, tagDeletedTable, 1, 4))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e VersionEdit
		err := e.Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("error %v does not wrap ErrCorruption", err)
			}
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("accepted an invalid edit: %v", err)
		}
		if !bytes.Equal(e.Encode(), b) {
			t.Fatalf("accepted non-canonical input")
		}
		var bulk BulkVersionEdit
		if err := bulk.Accumulate(&e); err != nil && !errors.Is(err, ErrCorruption) {
			t.Fatalf("Accumulate: %v", err)
		}
		if _, err := bulk.Apply(); err != nil && !errors.Is(err, ErrCorruption) {
			t.Fatalf("Apply: %v", err)
		}
	})
}
