package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseWord parses s as exactly one word and returns its bytes.
func parseWord(t testing.TB, s string) []byte {
	t.Helper()
	stmts, err := splitStatements(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	if len(stmts) != 1 || len(stmts[0]) != 1 {
		t.Fatalf("parse %q: want one word, got %v", s, stmts)
	}
	b, err := wordBytes(stmts[0][0])
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return b
}

// randomBytes draws byte strings rich in the cases formatting must get
// right: control bytes, quotes, ';', '#', "0x", spaces, multi-byte and
// invalid UTF-8.
func randomBytes(r *rand.Rand) []byte {
	pieces := []string{"a", "Z", "0", "x", "0x", "#", ";", " ", "\t", "\n", "\"", "'", "\\",
		"\x00", "\x7f", "\xff", "\xc3", "é", "😀", "\u200b", "limit", "\r", "\x1b"}
	n := r.IntN(8)
	var b []byte
	for range n {
		if r.IntN(4) == 0 {
			b = append(b, byte(r.IntN(256)))
		} else {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
	}
	return b
}

// TestFormatParseRoundTrip checks the promise of formatBytes: whatever the
// bytes, the printed form typed back as a word gives the same bytes, and
// it is bare exactly when the bytes are a plain word.
func TestFormatParseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		b := randomBytes(r)
		if i%7 == 0 {
			b = make([]byte, r.IntN(6))
			for j := range b {
				b[j] = byte(r.IntN(256))
			}
		}
		f := formatBytes(b)
		if got := parseWord(t, f); !bytes.Equal(got, b) {
			t.Fatalf("bytes %q formatted as %s parse back as %q", b, f, got)
		}
		if strings.HasPrefix(f, `"`) == isPlainWord(b) {
			t.Fatalf("bytes %q formatted as %s: bare=%v but isPlainWord=%v", b, f, !strings.HasPrefix(f, `"`), isPlainWord(b))
		}
		if !utf8.ValidString(f) {
			t.Fatalf("formatted %q is not valid UTF-8", f)
		}
		for _, c := range []byte(f) {
			if c < 0x20 || c == 0x7f {
				t.Fatalf("formatted %q holds control byte %#x", f, c)
			}
		}
	}
}

func TestSplitStatements(t *testing.T) {
	cases := []struct {
		in   string
		want string // statements joined by " | ", words by ",", quoted words marked with Q
	}{
		{"", ""},
		{"   ", ""},
		{"get a", "get,a"},
		{"put a 1; get a", "put,a,1 | get,a"},
		{"put a 1;get a;", "put,a,1 | get,a"},
		{";;", ""},
		{`put "a b" 'c d'`, "put,Qa b,Qc d"},
		{`put "a;b" x`, "put,Qa;b,x"},
		{"get a # comment; get b", "get,a"},
		{"# only a comment", ""},
		{"put a#b c", "put,a#b,c"},
		{`put "\x00\xff" v`, "put,Q\x00\xff,v"},
		{`put "\u00e9" v`, "put,Qé,v"},
		{`put "\377" v`, "put,Q\xff,v"},
		{`put "" v`, "put,Q,v"},
		{"put\ta\u00a0b", "put,a,b"},
	}
	for _, c := range cases {
		stmts, err := splitStatements(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		var parts []string
		for _, st := range stmts {
			var ws []string
			for _, w := range st {
				if w.quoted {
					ws = append(ws, "Q"+w.text)
				} else {
					ws = append(ws, w.text)
				}
			}
			parts = append(parts, strings.Join(ws, ","))
		}
		if got := strings.Join(parts, " | "); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSplitStatementsErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{`put "abc`, `column 5: unterminated " string`},
		{`put 'abc`, `column 5: unterminated ' string`},
		{`put "a\`, `column 7: unterminated " string`},
		{`put "a"b`, `column 8: unexpected 'b' after a quoted word`},
		{`put a"b"`, `column 6: quote inside a word`},
		{`put "\q"`, `column 6: bad escape \q`},
		{`put "\x4"`, `column 6: bad escape \x4`},
		{`put "\'"`, `column 6: bad escape \'`},
		{`put "\uD800"`, `column 6: bad escape \uD800`},
		{`é "\q"`, `column 4: bad escape \q`},
	}
	for _, c := range cases {
		_, err := splitStatements(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got error %v, want one containing %q", c.in, err, c.want)
		}
	}
}

func TestWordBytesHex(t *testing.T) {
	for _, c := range []struct {
		word   string
		quoted bool
		want   string
		err    string
	}{
		{"0x", false, "", ""},
		{"0x00ff", false, "\x00\xff", ""},
		{"0XAbCd", false, "\xab\xcd", ""},
		{"0x00ff", true, "0x00ff", ""},
		{"0x0", false, "", "odd number of digits"},
		{"0xzz", false, "", "non-hex digit"},
		{"x00", false, "x00", ""},
	} {
		got, err := wordBytes(token{text: c.word, quoted: c.quoted, col: 1})
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: got %q, %v; want error %q", c.word, got, err, c.err)
			}
		case err != nil || string(got) != c.want:
			t.Errorf("%q (quoted %v): got %q, %v; want %q", c.word, c.quoted, got, err, c.want)
		}
	}
}

// FuzzSplitStatements feeds arbitrary command lines to the parser: it must
// never panic, and every word it accepts must survive a format and re-parse
// unchanged (so what the shell prints can always be typed back).
func FuzzSplitStatements(f *testing.F) {
	for _, s := range []string{"get a", `put "a b" 'c'`, `put "\x00\xff" 0x00ff; get a # c`,
		`put "\u00e9\U0001F600" v`, `"unterminated`, `a"b`, "put\x00a\xffb", `scan "limit" limit 3`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		stmts, err := splitStatements(line)
		if err != nil {
			return
		}
		for _, st := range stmts {
			if len(st) == 0 {
				t.Fatalf("%q: empty statement", line)
			}
			for _, w := range st {
				b, err := wordBytes(w)
				if err != nil {
					continue
				}
				if got := parseWord(t, formatBytes(b)); !bytes.Equal(got, b) {
					t.Fatalf("%q: word %q formats as %s, which parses as %q", line, b, formatBytes(b), got)
				}
			}
		}
	})
}

func TestSuggest(t *testing.T) {
	for in, want := range map[string]string{
		"gte": "get", "sacn": "scan", "comp": "compact", "fluhs": "flush", "GET": "get",
		"stat": "stats", "tabels": "tables", "xyz": "", "x": "", "": "", "puts": "put",
		"dle": "del", "quti": "quit", "ex": "", "exp": "explain",
	} {
		if got := suggest(in); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOSADistance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"", "a", "ab", "ba", "abc", "acb", "get", "gte", "scan", "compact", "é", "éa"}
	for _, a := range words {
		if d := osaDistance(a, a); d != 0 {
			t.Errorf("d(%q,%q) = %d", a, a, d)
		}
		for _, b := range words {
			d := osaDistance(a, b)
			if d != osaDistance(b, a) {
				t.Errorf("d(%q,%q) not symmetric", a, b)
			}
			la, lb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
			if d < abs(la-lb) || d > max(la, lb) {
				t.Errorf("d(%q,%q) = %d outside [%d, %d]", a, b, d, abs(la-lb), max(la, lb))
			}
		}
	}
	// One random edit is at distance at most 1.
	for range 1000 {
		w := []byte(words[r.IntN(len(words))] + "xyz")
		e := append([]byte{}, w...)
		switch i := r.IntN(len(e)); r.IntN(4) {
		case 0:
			e[i] = 'q'
		case 1:
			e = append(e[:i], e[i+1:]...)
		case 2:
			e = append(e[:i], append([]byte{'q'}, e[i:]...)...)
		case 3:
			if i+1 < len(e) {
				e[i], e[i+1] = e[i+1], e[i]
			}
		}
		if !utf8.Valid(e) {
			continue
		}
		if d := osaDistance(string(w), string(e)); d > 1 {
			t.Fatalf("d(%q,%q) = %d after one edit", w, e, d)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestJSONBytesLossless: a key or value in JSON output decodes back to
// exactly its bytes, as a string when valid UTF-8 and as {"hex"} otherwise.
func TestJSONBytesLossless(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		b := randomBytes(r)
		enc, err := json.Marshal(struct {
			V *jsonBytes `json:"v,omitempty"`
		}{optBytes(b)})
		if err != nil {
			t.Fatal(err)
		}
		var dec struct {
			V json.RawMessage `json:"v"`
		}
		if err := json.Unmarshal(enc, &dec); err != nil || dec.V == nil {
			t.Fatalf("%q: %s: %v", b, enc, err)
		}
		var got []byte
		var s string
		if json.Unmarshal(dec.V, &s) == nil {
			if !utf8.Valid(b) {
				t.Fatalf("invalid UTF-8 %q encoded as a string %s", b, enc)
			}
			got = []byte(s)
		} else {
			var h struct{ Hex string }
			if err := json.Unmarshal(dec.V, &h); err != nil {
				t.Fatalf("%s: %v", enc, err)
			}
			if got, err = hex.DecodeString(h.Hex); err != nil {
				t.Fatalf("%s: %v", enc, err)
			}
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("%q encoded as %s decodes to %q", b, enc, got)
		}
	}
}
