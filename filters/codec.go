package filters

import "fmt"

// codec is one filter type's encoding: the envelope's type byte, the body
// format version its encoder writes and its decoder reads, and the name its
// errors carry. Every filter declares one at package level with newCodec, so
// the version check, the type check, the registration with Unmarshal and the
// naming of errors are written once, here, and Unmarshal and the typed
// UnmarshalBinary fail with the same message for the same bytes.
type codec[T any] struct {
	typ     Type
	version uint8
	name    string
	// decode reads a body of this type and version from r, checking every
	// field (F3), and finishes r; the envelope is already verified.
	decode func(r *bodyReader) (*T, error)
}

// newCodec returns the codec for filter *T and registers its decoder with
// Unmarshal. PT is *T, spelled out so a decoded *T is known to be a Filter.
func newCodec[T any, PT interface {
	*T
	Filter
}](typ Type, version uint8, name string, decode func(r *bodyReader) (*T, error)) *codec[T] {
	c := &codec[T]{typ: typ, version: version, name: name, decode: decode}
	registerDecoder(typ, func(version uint8, body []byte) (Filter, error) {
		f, err := c.decodeVersion(version, body)
		if err != nil {
			// Returned before the conversion, so a failed decode yields a
			// nil Filter, not an interface holding a nil pointer.
			return nil, c.wrap(err)
		}
		return PT(f), nil
	})
	return c
}

// decodeVersion refuses a body version this build does not read, then
// decodes the body with a reader over it.
func (c *codec[T]) decodeVersion(version uint8, body []byte) (*T, error) {
	if version != c.version {
		return nil, corruptf("unknown version %d", version)
	}
	return c.decode(&bodyReader{buf: body})
}

// wrap names the filter in a decoding error.
func (c *codec[T]) wrap(err error) error { return fmt.Errorf("filters: %s: %w", c.name, err) }

// seal wraps an encoder's body in the envelope of this type and version.
func (c *codec[T]) seal(body []byte) []byte { return sealEnvelope(c.typ, c.version, body) }

// unmarshal is every filter's UnmarshalBinary: it opens data as an envelope
// of this type, decodes the body and replaces *dst. On error *dst is
// unchanged and the error, naming the filter, wraps ErrCorrupt.
func (c *codec[T]) unmarshal(dst *T, data []byte) error {
	version, body, err := openTyped(data, c.typ)
	if err != nil {
		return c.wrap(err)
	}
	f, err := c.decodeVersion(version, body)
	if err != nil {
		return c.wrap(err)
	}
	*dst = *f
	return nil
}
