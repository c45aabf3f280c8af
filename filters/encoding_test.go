package filters

import (
	"errors"
	"testing"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	body := []byte("hello filter body")
	enc := sealEnvelope(TypeBloom, 3, body)
	typ, version, got, err := openEnvelope(enc)
	if err != nil {
		t.Fatal(err)
	}
	if typ != TypeBloom || version != 3 || string(got) != string(body) {
		t.Fatalf("got type %d version %d body %q", typ, version, got)
	}
}

func TestEnvelopeRejectsEveryByteFlip(t *testing.T) {
	enc := sealEnvelope(TypeBloom, 1, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	for i := range enc {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := append([]byte(nil), enc...)
			bad[i] ^= mask
			if _, _, _, err := openEnvelope(bad); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flip %#x at byte %d: err = %v, want ErrCorrupt", mask, i, err)
			}
		}
	}
	for n := 0; n < len(enc); n++ {
		if _, _, _, err := openEnvelope(enc[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: err = %v, want ErrCorrupt", n, err)
		}
	}
}

func TestBodyReaderRefusesHugeCounts(t *testing.T) {
	r := bodyReader{buf: make([]byte, 16)}
	if got := r.u64s(1<<60, "words"); got != nil {
		t.Fatal("u64s allocated for a count the body cannot hold")
	}
	if err := r.finish(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	r = bodyReader{buf: make([]byte, 16)}
	_ = r.u16s(^uint64(0), "halves")
	if err := r.finish(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
}

func TestUnmarshalUnknownType(t *testing.T) {
	enc := sealEnvelope(Type(250), 1, nil)
	if _, err := Unmarshal(enc); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
}
