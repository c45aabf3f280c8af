package kv

import (
	"errors"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestWriteTooLargeForOneBlockIsInvalid caught a value just under the
// batch limit accepted although its table block would be a few bytes past
// the 1 GiB a reader accepts: acknowledged, then unreadable once flushed.
// Such writes, and batches that would pass the limit, are refused before
// any copy (the huge slice here is never touched, so costs no memory).
func TestWriteTooLargeForOneBlockIsInvalid(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	huge := make([]byte, maxBatchSize-20)
	if err := d.Set([]byte("k"), huge, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Set of a %d-byte value = %v, want ErrInvalidArgument", len(huge), err)
	}
	if err := d.Set(huge[:maxEntrySize+1], nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Set of a %d-byte key = %v, want ErrInvalidArgument", maxEntrySize+1, err)
	}
	if err := d.DeleteRange(huge[:maxEntrySize], []byte{1}, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("DeleteRange of %d bytes of keys = %v, want ErrInvalidArgument", maxEntrySize+1, err)
	}
	b := d.NewBatch()
	b.Set([]byte("a"), []byte("1"))
	b.Set([]byte("big"), huge)
	if b.Len() > 64 {
		t.Fatalf("the batch copied the refused write (%d bytes)", b.Len())
	}
	if err := d.Apply(b, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Apply of a batch with a write past the limit = %v, want ErrInvalidArgument", err)
	}
	if _, err := d.Get([]byte("a")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused batch wrote its first entry: %v", err)
	}
	// The refusals left the DB writable.
	if err := d.Set([]byte("k"), []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
}
