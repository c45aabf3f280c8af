package filters

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
)

// zeroValueCase is one exported filter type and what its zero value (a
// filter no constructor, builder or UnmarshalBinary made) documents.
type zeroValueCase struct {
	typ  Type
	zero func() Filter // a fresh *T{}
	// mayContain is every point query's answer: false for the filters whose
	// zero value is empty, true for the Bloom filters, whose Add cannot
	// refuse a key and so whose zero value cannot prove absence.
	mayContain bool
	// encodes is set for the zero values that are valid empty filters with
	// an encoding; the others' MarshalBinary wraps ErrInvalidArgument.
	encodes bool
}

// zeroValueCases lists every filter type. TestZeroValuesCoverEveryType
// fails when a type registers a decoder without appearing here.
var zeroValueCases = []zeroValueCase{
	{TypeBloom, func() Filter { return &Bloom{} }, true, false},
	{TypeBlockedBloom, func() Filter { return &BlockedBloom{} }, true, false},
	{TypeCountingBloom, func() Filter { return &CountingBloom{} }, true, false},
	{TypeScalableBloom, func() Filter { return &ScalableBloom{} }, true, false},
	{TypeXor8, func() Filter { return &Xor8{} }, false, true},
	{TypeBinaryFuse8, func() Filter { return &BinaryFuse8{} }, false, true},
	{TypeBinaryFuse16, func() Filter { return &BinaryFuse16{} }, false, true},
	{TypeBinaryFuse, func() Filter { return &BinaryFuse{} }, false, false},
	{TypeCuckoo, func() Filter { return &Cuckoo{} }, false, false},
	{TypeQuotient, func() Filter { return &Quotient{} }, false, false},
	{TypeRibbon, func() Filter { return &Ribbon{} }, false, false},
	{TypeCountingQuotient, func() Filter { return &CountingQuotient{} }, false, false},
	{TypeVectorQuotient, func() Filter { return &VectorQuotient{} }, false, false},
	{TypeMorton, func() Filter { return &Morton{} }, false, false},
	{TypeVacuum, func() Filter { return &Vacuum{} }, false, false},
	{TypeRange, func() Filter { return &RangeFilter{} }, false, false},
}

// TestZeroValuesCoverEveryType ties zeroValueCases to the decoder registry
// every filter type joins, so a new filter cannot skip the zero-value test.
func TestZeroValuesCoverEveryType(t *testing.T) {
	listed := map[Type]bool{}
	for _, c := range zeroValueCases {
		if listed[c.typ] {
			t.Errorf("%v listed twice", c.typ)
		}
		listed[c.typ] = true
		if got := reflect.TypeOf(c.zero()); got != reflect.TypeOf(mustDecodeType(t, c.typ)) {
			t.Errorf("%v: case builds %v, the decoder returns %v", c.typ, got, reflect.TypeOf(mustDecodeType(t, c.typ)))
		}
	}
	for typ := range decoders {
		if !listed[typ] {
			t.Errorf("filter type %v has a decoder but no zeroValueCases row", typ)
		}
	}
}

// mustDecodeType builds a small real filter of type typ, encodes it and
// returns what Unmarshal decodes, so the test can check a case's Go type
// against the one the registry hands out for typ.
func mustDecodeType(t *testing.T, typ Type) Filter {
	t.Helper()
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	var f Filter
	var err error
	switch typ {
	case TypeBloom:
		f, err = NewBloom(3, 0.01)
	case TypeBlockedBloom:
		f, err = NewBlockedBloom(3, 0.01)
	case TypeCountingBloom:
		f, err = NewCountingBloom(3, 0.01)
	case TypeScalableBloom:
		f, err = NewScalableBloom(3, 0.01)
	case TypeXor8:
		f, err = BuildXor8(keys)
	case TypeBinaryFuse8:
		f, err = BuildBinaryFuse8(keys)
	case TypeBinaryFuse16:
		f, err = BuildBinaryFuse16(keys)
	case TypeBinaryFuse:
		f, err = BuildBinaryFuse(keys, FuseOptions{Arity: 4, FingerprintBits: 10})
	case TypeCuckoo:
		f, err = NewCuckoo(3, 0.01)
	case TypeQuotient:
		f, err = NewQuotient(3, 0.01)
	case TypeRibbon:
		f, err = BuildRibbon(keys, RibbonOptions{ResultBits: 7})
	case TypeCountingQuotient:
		f, err = NewCountingQuotient(3, 0.01)
	case TypeVectorQuotient:
		f, err = NewVectorQuotient(3, 0.01)
	case TypeMorton:
		f, err = NewMorton(3, 0.01)
	case TypeVacuum:
		f, err = NewVacuum(3, 0.01)
	case TypeRange:
		f, err = NewRangeFilter(keys, 10)
	default:
		t.Fatalf("no constructor known for %v", typ)
	}
	if err != nil {
		t.Fatalf("%v: %v", typ, err)
	}
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatalf("%v: MarshalBinary: %v", typ, err)
	}
	g, gotType, err := UnmarshalWithType(enc)
	if err != nil || gotType != typ {
		t.Fatalf("%v: UnmarshalWithType = %v, %v", typ, gotType, err)
	}
	return g
}

// TestZeroValues calls every exported method of every filter type's zero
// value (a fresh one per method) and requires no panic and the result the
// type's doc promises. A method with no rule below fails the test, so a new
// method has to state what its zero value does.
//
// Nil pointers are not exercised: every constructor, builder and Unmarshal
// returns a nil filter only together with a non-nil error, so a nil
// receiver is not reachable without ignoring an error.
func TestZeroValues(t *testing.T) {
	key, hash := zeroProbeKey, Hash(zeroProbeKey)
	noPanicOnly := []string{
		"Bits", "K", "FingerprintBits", "RemainderBits", "QuotientBits", "TagBits",
		"MaxLoad", "SizeBits", "SizeInBytes", "EncodedLen", "Options", "ChunkBuckets",
		"AliasHash", "CodeWidth", "Exact", "EstimatedFPRate",
	}
	for _, c := range zeroValueCases {
		t.Run(c.typ.String(), func(t *testing.T) {
			pt := reflect.TypeOf(c.zero())
			for i := 0; i < pt.NumMethod(); i++ {
				m := pt.Method(i)
				t.Run(m.Name, func(t *testing.T) {
					f := c.zero()
					in := []reflect.Value{}
					for j := 1; j < m.Type.NumIn(); j++ {
						switch at := m.Type.In(j); {
						case at == reflect.TypeFor[[]byte]() && m.Name == "UnmarshalBinary":
							in = append(in, reflect.ValueOf([]byte("not a filter")))
						case at == reflect.TypeFor[[]byte]():
							in = append(in, reflect.ValueOf(key))
						case at == reflect.TypeFor[uint64]():
							in = append(in, reflect.ValueOf(hash))
						case at == reflect.TypeFor[[]uint64]() && j == 1:
							in = append(in, reflect.ValueOf([]uint64{hash, hash + 1}))
						default:
							in = append(in, reflect.Zero(at))
						}
					}
					var out []reflect.Value
					func() {
						defer func() {
							if r := recover(); r != nil {
								t.Fatalf("zero %v.%s panicked: %v", c.typ, m.Name, r)
							}
						}()
						out = reflect.ValueOf(f).Method(i).Call(in)
					}()
					checkZeroResult(t, c, f, m.Name, out, noPanicOnly)
				})
			}
		})
	}
}

// checkZeroResult holds the zero value's documented result of method name.
func checkZeroResult(t *testing.T, c zeroValueCase, f Filter, name string, out []reflect.Value, noPanicOnly []string) {
	t.Helper()
	errOf := func(v reflect.Value) error {
		if v.IsNil() {
			return nil
		}
		return v.Interface().(error)
	}
	dynamic := !c.mayContain && !c.encodes
	switch name {
	case "MayContain", "MayContainHash", "MayContainRange":
		want := c.mayContain
		if c.typ == TypeRange && name == "MayContainHash" {
			want = true // every RangeFilter: a hash carries no order
		}
		if got := out[0].Bool(); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	case "Len", "Cap", "Slots", "Stages", "Count", "CountHash", "CopiesHash", "RemoveHashes":
		if got := out[0].Convert(reflect.TypeFor[uint64]()).Uint(); got != 0 {
			t.Errorf("%s = %d, want 0", name, got)
		}
	case "LoadFactor", "FillRatio", "OverflowFraction", "FPBound":
		if got := out[0].Float(); got != 0 || math.IsNaN(got) {
			t.Errorf("%s = %v, want 0", name, got)
		}
	case "Add", "AddHash", "Resize", "AddHashes":
		if len(out) == 0 { // the Bloom filters' Add: cannot refuse, ignored
			break
		}
		err := errOf(out[len(out)-1])
		if dynamic && !errors.Is(err, ErrFull) {
			t.Errorf("%s error = %v, want one wrapping ErrFull", name, err)
		}
		if name == "AddHashes" && out[1].Int() != 0 {
			t.Errorf("AddHashes took %d hashes, want 0", out[1].Int())
		}
		if f.MayContain(zeroProbeKey) != c.mayContain {
			t.Errorf("after a refused %s, MayContain = %v", name, !c.mayContain)
		}
	case "Remove", "RemoveHash":
		switch out[0].Kind() {
		case reflect.Bool:
			if out[0].Bool() {
				t.Errorf("%s = true on an empty filter", name)
			}
		default: // CountingBloom: every key is "maybe", so Remove cannot refuse
			if err := errOf(out[0]); err != nil {
				t.Errorf("%s = %v, want nil", name, err)
			}
		}
	case "MarshalBinary":
		err := errOf(out[1])
		if c.encodes {
			if err != nil {
				t.Fatalf("MarshalBinary: %v", err)
			}
			g, err := Unmarshal(out[0].Bytes())
			if err != nil || g.MayContain(zeroProbeKey) {
				t.Errorf("zero value's encoding decodes to %v, %v", g, err)
			}
		} else if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("MarshalBinary error = %v, want one wrapping ErrInvalidArgument", err)
		}
	case "UnmarshalBinary":
		if err := errOf(out[0]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("UnmarshalBinary(garbage) = %v, want one wrapping ErrCorrupt", err)
		}
	default:
		if !slices.Contains(noPanicOnly, name) {
			t.Errorf("no zero-value rule for %v.%s: add one to checkZeroResult", c.typ, name)
		}
	}
}

// zeroProbeKey is the key the zero-value tests query and add.
var zeroProbeKey = []byte("key")
