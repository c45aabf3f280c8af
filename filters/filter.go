package filters

import "fmt"

// Filter is the query side every filter in this package offers.
type Filter interface {
	// MayContain reports false only if key was definitely never added.
	MayContain(key []byte) bool
	// MayContainHash is MayContain for a key whose Hash the caller holds.
	MayContainHash(h uint64) bool
	// MarshalBinary returns the filter's self-describing, checksummed
	// encoding, decodable by Unmarshal (see docs/format.md). A zero value
	// (a filter no constructor, builder or UnmarshalBinary made) has no
	// encoding and is refused with ErrInvalidArgument, except the zero
	// Xor8, BinaryFuse8 and BinaryFuse16, which are empty filters. Every
	// zero value may be queried: the dynamic fingerprint filters (Cuckoo,
	// Vacuum, Quotient, CountingQuotient, VectorQuotient, Morton) and
	// RangeFilter answer "absent" (they hold nothing), the Bloom filters
	// "maybe" (their Add has no error to refuse a key with, so a zero Bloom
	// cannot prove absence). Each type's doc states its zero value.
	MarshalBinary() ([]byte, error)
}

// decodeFunc decodes a verified body of one filter type and version into a
// fresh Filter. The envelope (magic, length, checksum) is already checked.
type decodeFunc func(version uint8, body []byte) (Filter, error)

// decoders maps each filter type to its decoder. Each filter registers itself
// from an init function in its own file, so adding a filter touches no
// shared switch statement.
var decoders = map[Type]decodeFunc{}

func registerDecoder(t Type, fn decodeFunc) {
	if _, dup := decoders[t]; dup {
		panic(fmt.Sprintf("filters: decoder for type %d registered twice", t))
	}
	decoders[t] = fn
}

// Unmarshal decodes any filter of this package from the bytes its
// MarshalBinary produced. Malformed input yields an error wrapping ErrCorrupt.
func Unmarshal(data []byte) (Filter, error) {
	f, _, err := UnmarshalWithType(data)
	return f, err
}

// UnmarshalWithType is Unmarshal that also returns the type the envelope
// names, for a caller that checks it against its own record of the type.
func UnmarshalWithType(data []byte) (Filter, Type, error) {
	t, version, body, err := openEnvelope(data)
	if err != nil {
		return nil, 0, err
	}
	dec, ok := decoders[t]
	if !ok {
		return nil, 0, corruptf("unknown filter type %d", t)
	}
	f, err := dec(version, body)
	if err != nil {
		return nil, 0, err
	}
	return f, t, nil
}
