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

// decoderOf adapts a filter's typed body decoder to the registry. The
// error check comes first so a failed decode yields a nil Filter, not an
// interface holding a nil pointer.
func decoderOf[T Filter](decode func(version uint8, body []byte) (T, error)) decodeFunc {
	return func(version uint8, body []byte) (Filter, error) {
		f, err := decode(version, body)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}

// unmarshalAs is every filter's UnmarshalBinary: it opens data as an
// envelope of type t, decodes the body with decode and replaces *dst. On
// error *dst is unchanged and the error, naming the filter, wraps
// ErrCorrupt.
func unmarshalAs[T any](dst *T, data []byte, t Type, name string, decode func(version uint8, body []byte) (*T, error)) error {
	version, body, err := openTyped(data, t)
	if err == nil {
		var f *T
		if f, err = decode(version, body); err == nil {
			*dst = *f
			return nil
		}
	}
	return fmt.Errorf("filters: %s: %w", name, err)
}

// namedDecoderOf is decoderOf for a decoder whose errors do not name its
// filter: it prefixes them with name.
func namedDecoderOf[T Filter](name string, decode func(version uint8, body []byte) (T, error)) decodeFunc {
	inner := decoderOf(decode)
	return func(version uint8, body []byte) (Filter, error) {
		f, err := inner(version, body)
		if err != nil {
			return nil, fmt.Errorf("filters: %s: %w", name, err)
		}
		return f, nil
	}
}
