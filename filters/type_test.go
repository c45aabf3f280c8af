package filters

import (
	"errors"
	"testing"
)

// TestTableCodesFrozen pins the bytes tables and manifests already hold for
// each filter: renumbering one would misread every existing table.
func TestTableCodesFrozen(t *testing.T) {
	want := map[Type]uint8{TypeBinaryFuse8: 0, TypeBinaryFuse16: 1, TypeXor8: 2, TypeBloom: 3,
		TypeBlockedBloom: 4, TypeNone: 5, TypeRibbon: 6, TypeBinaryFuse: 7}
	for ty := range types {
		code, ok := ty.TableCode()
		w, inTables := want[ty]
		if ok != inTables || (ok && code != w) {
			t.Errorf("%s: table code %d, %v; want %d, %v", ty, code, ok, w, inTables)
		}
		if ok {
			if back, found := TypeFromTableCode(code); !found || back != ty {
				t.Errorf("TypeFromTableCode(%d) = %s, %v; want %s", code, back, found, ty)
			}
		}
	}
	if _, ok := TypeFromTableCode(8); ok {
		t.Error("table code 8 decodes")
	}
}

// TestParseTypeNames checks that every canonical name and alias parses
// back to its type, that String prints the canonical name, and that names
// are unique across the vocabulary.
func TestParseTypeNames(t *testing.T) {
	seen := map[string]Type{}
	for ty, info := range types {
		if ty.String() != info.name {
			t.Errorf("%d prints %q, want %q", ty, ty.String(), info.name)
		}
		for _, s := range append([]string{info.name}, info.aliases...) {
			if other, dup := seen[s]; dup {
				t.Errorf("name %q names both %s and %s", s, other, ty)
			}
			seen[s] = ty
			if got, err := ParseType(s); err != nil || got != ty {
				t.Errorf("ParseType(%q) = %v, %v; want %s", s, got, err, ty)
			}
		}
	}
	if got, err := ParseType("BinaryFuse8"); err != nil || got != TypeBinaryFuse8 {
		t.Errorf("ParseType is case-sensitive: %v, %v", got, err)
	}
	if _, err := ParseType("bogus"); !errors.Is(err, ErrUnknownType) {
		t.Errorf("ParseType(bogus) = %v, want ErrUnknownType", err)
	}
}

// TestPoliciesBuildTheirType builds a filter with every registered policy
// and checks that it decodes as the policy's type and holds every hash.
func TestPoliciesBuildTheirType(t *testing.T) {
	hs := make([]uint64, 2000)
	for i := range hs {
		hs[i] = Hash([]byte{byte(i), byte(i >> 8), 'k'})
	}
	hs = append(hs, hs[0]) // duplicates are allowed
	for _, ty := range PolicyTypes() {
		p, err := NewPolicy(ty, PolicyParams{BloomBitsPerKey: 10, RibbonBits: 7, Fuse: FuseOptions{Arity: 4, FingerprintBits: 9}})
		if err != nil {
			t.Fatalf("%s: %v", ty, err)
		}
		enc, err := p.Build(hs)
		if err != nil {
			t.Fatalf("%s: build: %v", ty, err)
		}
		f, got, err := UnmarshalWithType(enc)
		if err != nil || got != ty || p.Type() != ty {
			t.Fatalf("%s: policy of type %s built an encoding of %s (%v)", ty, p.Type(), got, err)
		}
		for _, h := range hs {
			if !f.MayContainHash(h) {
				t.Fatalf("%s: lost hash %#x", ty, h)
			}
		}
	}
	if _, err := NewPolicy(TypeNone, PolicyParams{}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("NewPolicy(none) = %v", err)
	}
	if _, err := NewPolicy(TypeCuckoo, PolicyParams{}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("NewPolicy(cuckoo) = %v", err)
	}
	if _, err := NewPolicy(TypeRibbon, PolicyParams{RibbonBits: 17}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewPolicy(ribbon, 17 bits) = %v", err)
	}
}
