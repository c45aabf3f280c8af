package memtable

import (
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/sievekv/sievekv/internal/base"
)

// TestAddRefusesLengthsPastUint32: an item records its key and value
// lengths in 32 bits, so a value of 4 GiB was stored as an empty one and
// Get answered with it: a silent wrong answer. Add must refuse it before
// it copies anything. The value is a fresh allocation the test never
// touches, so it costs address space, not memory, once Add refuses it.
func TestAddRefusesLengthsPastUint32(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) < 8 {
		t.Skip("needs a 64-bit address space")
	}
	m := New()
	huge := make([]byte, math.MaxUint32+1)
	func() {
		defer func() {
			p := recover()
			if s, _ := p.(string); !strings.Contains(s, "memtable:") {
				t.Fatalf("Add of a %d-byte value: recovered %v, want a memtable panic", len(huge), p)
			}
		}()
		m.Add(base.MakeInternalKey([]byte("k"), 1, base.KindSet), huge)
	}()
	if m.Len() != 0 {
		t.Fatalf("Len %d after a refused Add", m.Len())
	}
	// The memtable stays usable, its lock released.
	m.Set([]byte("k"), 2, []byte("v"))
	if v, _, ok := m.Get([]byte("k"), base.SeqNumMax); !ok || string(v) != "v" {
		t.Fatalf("Get after a refused Add: %q %v", v, ok)
	}
}
