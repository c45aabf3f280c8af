package memtable

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/sievekv/sievekv/internal/base"
)

// TestAddRefusesLengthsPastUint32: an item records its key and value
// lengths in 32 bits, so a value of 4 GiB was stored as an empty one and
// Get answered with it: a silent wrong answer. Add then panicked instead,
// which a program using the package directly could reach with its own
// input; it must return an error wrapping ErrEntryTooLarge before it
// copies anything. The value is a fresh allocation the test never
// touches, so it costs address space, not memory, once Add refuses it.
func TestAddRefusesLengthsPastUint32(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) < 8 {
		t.Skip("needs a 64-bit address space")
	}
	m := New()
	size := m.ApproximateSize()
	huge := make([]byte, math.MaxUint32+1)
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Add of a %d-byte value panicked: %v", len(huge), p)
			}
		}()
		err = m.Add(base.MakeInternalKey([]byte("k"), 1, base.KindSet), huge)
	}()
	if !errors.Is(err, ErrEntryTooLarge) {
		t.Fatalf("Add of a %d-byte value: %v, want an error wrapping ErrEntryTooLarge", len(huge), err)
	}
	if err := m.Set([]byte("k"), 1, huge); !errors.Is(err, ErrEntryTooLarge) {
		t.Fatalf("Set of a %d-byte value: %v, want an error wrapping ErrEntryTooLarge", len(huge), err)
	}
	if m.Len() != 0 || m.ApproximateSize() != size {
		t.Fatalf("Len %d, size %d (was %d) after a refused Add", m.Len(), m.ApproximateSize(), size)
	}
	// The memtable stays usable, its lock released.
	if err := m.Set([]byte("k"), 2, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, _, ok := m.Get([]byte("k"), base.SeqNumMax); !ok || string(v) != "v" {
		t.Fatalf("Get after a refused Add: %q %v", v, ok)
	}
}

// TestAddAfterFreezeIsAnError: Add on a frozen memtable panicked; it is
// reachable by any program holding a frozen memtable, so it returns an
// error wrapping ErrFrozen and leaves the memtable as it was.
func TestAddAfterFreezeIsAnError(t *testing.T) {
	m := New()
	if err := m.Set([]byte("a"), 1, []byte("1")); err != nil {
		t.Fatal(err)
	}
	m.Freeze()
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Add after Freeze panicked: %v", p)
			}
		}()
		err = m.Delete([]byte("a"), 2)
	}()
	if !errors.Is(err, ErrFrozen) {
		t.Fatalf("Delete after Freeze: %v, want an error wrapping ErrFrozen", err)
	}
	if v, kind, ok := m.Get([]byte("a"), base.SeqNumMax); !ok || kind != base.KindSet || string(v) != "1" || m.Len() != 1 {
		t.Fatalf("after a refused Add: Get = %q %v %v, Len %d", v, kind, ok, m.Len())
	}
}
