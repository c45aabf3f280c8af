package filters

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil/golden"
)

// goldenKeys is the fixed input of the golden-bytes tests.
var goldenKeys = [][]byte{[]byte("apple"), []byte("banana"), []byte("cherry")}

// TestStaticGoldenBytes pins the encoding of one small filter of each type,
// so the format (and the seed sequence, sizing and position functions that
// decide the fingerprint bytes) cannot drift by accident. A deliberate format
// change bumps the version and regenerates with -update.
func TestStaticGoldenBytes(t *testing.T) {
	for _, k := range staticKinds() {
		f, err := k.fromKeys(goldenKeys)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := f.MarshalBinary()
		// Three keys leave most slots zero, so they barely exercise the
		// position functions; the checksum of a 1000-key encoding pins
		// those too (it is a function of every byte).
		big, err := k.fromHash(new(FuseBuilder), randomHashes(2024, 1000))
		if err != nil {
			t.Fatal(err)
		}
		bigEnc, _ := big.MarshalBinary()
		got := fmt.Sprintf("%x\n1000-key encoding: %d bytes, crc %x\n", enc, len(bigEnc), bigEnc[len(bigEnc)-4:])
		golden.Check(t, k.name, got)
		// The pinned bytes decode to a filter that still holds the keys.
		g, err := Unmarshal(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range goldenKeys {
			if !g.MayContain(key) {
				t.Fatalf("%s: golden filter lost %q", k.name, key)
			}
		}
	}
}

// fuzzSeedFilters returns valid encodings of filters of a few sizes.
func fuzzSeedEncodings(t testing.TB, k staticKind) [][]byte {
	var out [][]byte
	for _, n := range []int{0, 1, 2, 3, 20} {
		f, err := k.fromHash(new(FuseBuilder), randomHashes(uint64(n)+77, n))
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := f.MarshalBinary()
		out = append(out, enc)
	}
	return out
}

// fuzzStaticDecoder is the body of every static filter's decode fuzz target.
// The fuzzer's bytes are tried three ways: as a whole encoding; as the body
// of a correctly checksummed envelope of the target's type (so mutations
// reach the parameter checks behind the CRC); and, when they look like an
// encoding, with their own body resealed (so mutations of the valid seeds do
// too). Every outcome must be either ErrCorrupt or a filter that re-encodes
// to the same bytes and answers queries without panicking (invariant F3).
func fuzzStaticDecoder(f *testing.F, k staticKind) {
	for _, enc := range fuzzSeedEncodings(f, k) {
		f.Add(enc)
		f.Add(enc[envelopeHeaderSize : len(enc)-envelopeTrailer])
	}
	f.Add([]byte{})
	f.Add([]byte("SVKF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStaticDecode(t, k, data)
		checkStaticDecode(t, k, sealEnvelope(k.typ, 1, data))
		if len(data) >= envelopeHeaderSize+envelopeTrailer {
			checkStaticDecode(t, k, sealEnvelope(k.typ, data[5], data[envelopeHeaderSize:len(data)-envelopeTrailer]))
		}
	})
}

func checkStaticDecode(t *testing.T, k staticKind, enc []byte) {
	g, err := Unmarshal(enc)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Unmarshal error %v does not wrap ErrCorrupt", err)
		}
		if _, err2 := k.unmarshal(enc); err2 == nil && enc[4] == byte(k.typ) {
			t.Fatalf("UnmarshalBinary accepted what Unmarshal rejected (%v)", err)
		}
		return
	}
	checkDecodedFilter(t, g, enc, 64)
}

// checkDecodedFilter is what a decode fuzz target asks of a filter its
// decoder accepted from enc (invariant F3): it re-encodes to exactly enc,
// and probes queries by hash and one by key answer without panicking.
func checkDecodedFilter(t *testing.T, g Filter, enc []byte, probes uint64) {
	t.Helper()
	again, err := g.MarshalBinary()
	if err != nil || !bytes.Equal(again, enc) {
		t.Fatalf("decoded filter re-encodes differently (err %v)", err)
	}
	for h := uint64(0); h < probes; h++ {
		g.MayContainHash(h * 0x9e3779b97f4a7c15)
	}
	g.MayContain(enc)
}

func staticKindNamed(name string) staticKind {
	for _, k := range staticKinds() {
		if k.name == name {
			return k
		}
	}
	panic("no static kind " + name)
}

func FuzzXor8Decode(f *testing.F)         { fuzzStaticDecoder(f, staticKindNamed("Xor8")) }
func FuzzBinaryFuse8Decode(f *testing.F)  { fuzzStaticDecoder(f, staticKindNamed("BinaryFuse8")) }
func FuzzBinaryFuse16Decode(f *testing.F) { fuzzStaticDecoder(f, staticKindNamed("BinaryFuse16")) }

// TestWriteFuzzCorpus regenerates the committed seed corpora under
// testdata/fuzz when SIEVEKV_WRITE_CORPUS=1; otherwise it checks they exist,
// so a fuzz target is never left without its committed seeds.
func TestWriteFuzzCorpus(t *testing.T) {
	targets := map[string]string{
		"FuzzXor8Decode": "Xor8", "FuzzBinaryFuse8Decode": "BinaryFuse8",
		"FuzzBinaryFuse16Decode": "BinaryFuse16",
	}
	for target, kind := range generalFuzzTargets() {
		targets[target] = kind
	}
	for target, kind := range targets {
		dir := filepath.Join("testdata", "fuzz", target)
		if os.Getenv("SIEVEKV_WRITE_CORPUS") == "" {
			ents, err := os.ReadDir(dir)
			if err != nil || len(ents) < 3 {
				t.Errorf("%s: committed corpus missing or too small (%v)", target, err)
			}
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		k := staticKindNamed(kind)
		for i, enc := range fuzzSeedEncodings(t, k) {
			// A valid encoding, and one with its last fingerprint byte
			// changed and the checksum recomputed (decodes to a different
			// but valid filter), and a truncated body.
			body := enc[envelopeHeaderSize : len(enc)-envelopeTrailer]
			variants := [][]byte{enc, body[:len(body)/2]}
			if len(body) > 0 {
				mut := append([]byte(nil), body...)
				mut[len(mut)-1] ^= 0x5a
				variants = append(variants, sealEnvelope(k.typ, enc[5], mut))
			}
			for j, v := range variants {
				content := "go test fuzz v1\n[]byte(" + strconv.Quote(string(v)) + ")\n"
				name := filepath.Join(dir, fmt.Sprintf("seed-n%d-%d", i, j))
				if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
