package filters

import "fmt"

// Filter is the query side every filter in this package offers.
type Filter interface {
	// MayContain reports false only if key was definitely never added.
	MayContain(key []byte) bool
	// MayContainHash is MayContain for a key whose Hash the caller holds.
	MayContainHash(h uint64) bool
	// MarshalBinary returns the filter's self-describing, checksummed
	// encoding, decodable by Unmarshal (see docs/format.md).
	MarshalBinary() ([]byte, error)
}

// filterType identifies a filter in its encoding.
//
// Do not renumber: these values are on disk.
type filterType uint8

const (
	typeBloom            filterType = 1
	typeBlockedBloom     filterType = 2
	typeCountingBloom    filterType = 3
	typeScalableBloom    filterType = 4
	typeXor8             filterType = 5
	typeBinaryFuse8      filterType = 6
	typeBinaryFuse16     filterType = 7
	typeBinaryFuse       filterType = 8
	typeCuckoo           filterType = 9
	typeQuotient         filterType = 10
	typeRibbon           filterType = 11
	typeCountingQuotient filterType = 12
	typeVectorQuotient   filterType = 13
	typeMorton           filterType = 14
	typeVacuum           filterType = 15
)

// decodeFunc decodes a verified body of one filter type and version into a
// fresh Filter. The envelope (magic, length, checksum) is already checked.
type decodeFunc func(version uint8, body []byte) (Filter, error)

// decoders maps each filter type to its decoder. Each filter registers itself
// from an init function in its own file, so adding a filter touches no
// shared switch statement.
var decoders = map[filterType]decodeFunc{}

func registerDecoder(t filterType, fn decodeFunc) {
	if _, dup := decoders[t]; dup {
		panic(fmt.Sprintf("filters: decoder for type %d registered twice", t))
	}
	decoders[t] = fn
}

// Unmarshal decodes any filter of this package from the bytes its
// MarshalBinary produced. Malformed input yields an error wrapping ErrCorrupt.
func Unmarshal(data []byte) (Filter, error) {
	t, version, body, err := openEnvelope(data)
	if err != nil {
		return nil, err
	}
	dec, ok := decoders[t]
	if !ok {
		return nil, corruptf("unknown filter type %d", t)
	}
	return dec(version, body)
}
