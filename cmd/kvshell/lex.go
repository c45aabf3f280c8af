package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is one word of a command line. Quoted words keep their text
// literally (after escapes); unquoted words are what the user typed, and
// only they can be keywords ("limit") or hex literals ("0x00ff"), so a
// quoted "limit" or "0x1" is always a plain key.
type token struct {
	text   string // the word after quote removal and escape decoding
	quoted bool
	col    int // 1-based column of the word's first character, for errors
}

// syntaxError is a malformed command line: the message names the column so
// a long scripted line can be fixed without guessing.
type syntaxError struct {
	col int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("syntax error at column %d: %s", e.col, oneLine(e.msg))
}

// splitStatements cuts a line into statements of tokens. Statements are
// separated by an unquoted ';' and a '#' that starts an unquoted word begins
// a comment running to the end of the line. Empty statements are dropped.
//
// The grammar is deliberately small and shell-like:
//
//	word    = plain | '"' escaped '"' | "'" literal "'"
//	plain   = run of characters other than space, quotes, ';' (a '#' may
//	          appear inside a plain word but not start one)
//	escaped = Go string escapes: \\ \" \a \b \f \n \r \t \v \xHH \NNN
//	          (octal) \uHHHH \UHHHHHHHH; \xHH and octal give raw bytes
//	literal = any characters but "'", taken as typed
//
// A quoted word must be followed by a space, ';' or the end of the line:
// "a"b is an error rather than a silent concatenation.
//
// The lexer reads each byte of the line once and keeps the column as it
// goes, so its cost is linear in the line's length.
func splitStatements(line string) ([][]token, error) {
	return splitStatementsContext(context.Background(), line)
}

// splitStatementsContext is splitStatements that gives up with ctx's
// error once ctx is done (Ctrl-C on a pasted megabyte line).
func splitStatementsContext(ctx context.Context, line string) ([][]token, error) {
	lx := &lexer{ctx: ctx, line: line, col: 1}
	return lx.statements()
}

// lexCheckEvery is how many bytes the lexer reads between looks at its
// context: often enough for Ctrl-C to feel immediate, rarely enough to
// cost nothing.
const lexCheckEvery = 4096

// lexer walks one line. pos is a byte offset and col the 1-based column
// (in runes) of that offset, advanced together so no column is ever
// recounted from the start of the line.
type lexer struct {
	ctx       context.Context
	line      string
	pos, col  int
	nextCheck int
	// scanned counts the bytes decoded, for the test that the lexer is
	// linear (each byte once, plus a constant per escape).
	scanned int
}

// next returns the rune at pos and its size without consuming it.
func (lx *lexer) next() (rune, int) {
	lx.scanned++
	return utf8.DecodeRuneInString(lx.line[lx.pos:])
}

// advance consumes size bytes that hold runes runes.
func (lx *lexer) advance(size, runes int) {
	lx.pos += size
	lx.col += runes
}

// interrupted reports the context's error at most every lexCheckEvery bytes.
func (lx *lexer) interrupted() error {
	if lx.pos < lx.nextCheck {
		return nil
	}
	lx.nextCheck = lx.pos + lexCheckEvery
	return lx.ctx.Err()
}

func (lx *lexer) statements() ([][]token, error) {
	var stmts [][]token
	var cur []token
	for lx.pos < len(lx.line) {
		if err := lx.interrupted(); err != nil {
			return nil, err
		}
		r, size := lx.next()
		col := lx.col
		switch {
		case unicode.IsSpace(r):
			lx.advance(size, 1)
		case r == ';':
			if len(cur) > 0 {
				stmts = append(stmts, cur)
				cur = nil
			}
			lx.advance(size, 1)
		case r == '#':
			lx.pos = len(lx.line)
		case r == '"' || r == '\'':
			text, err := lx.quoted()
			if err != nil {
				return nil, err
			}
			if lx.pos < len(lx.line) {
				next, _ := lx.next()
				if !unicode.IsSpace(next) && next != ';' {
					return nil, &syntaxError{lx.col,
						fmt.Sprintf("unexpected %q after a quoted word (put a space before it)", next)}
				}
			}
			cur = append(cur, token{text: text, quoted: true, col: col})
		default:
			start := lx.pos
			for lx.pos < len(lx.line) {
				if err := lx.interrupted(); err != nil {
					return nil, err
				}
				r, size := lx.next()
				if unicode.IsSpace(r) || r == ';' {
					break
				}
				if r == '"' || r == '\'' {
					return nil, &syntaxError{lx.col,
						"quote inside a word (quote the whole word, e.g. \"ab\\\"c\")"}
				}
				lx.advance(size, 1)
			}
			cur = append(cur, token{text: lx.line[start:lx.pos], col: col})
		}
	}
	if len(cur) > 0 {
		stmts = append(stmts, cur)
	}
	return stmts, nil
}

// quoted decodes the quoted word at pos and consumes it.
func (lx *lexer) quoted() (string, error) {
	s, col := lx.line[lx.pos:], lx.col
	if s[0] == '\'' {
		// Search in chunks so a huge literal is interruptible too.
		for from := 1; from < len(s); from += lexCheckEvery {
			if from > 1 {
				if err := lx.ctx.Err(); err != nil {
					return "", err
				}
			}
			chunk := s[from:min(from+lexCheckEvery, len(s))]
			k := strings.IndexByte(chunk, '\'')
			if k < 0 {
				lx.scanned += len(chunk)
				continue
			}
			lx.scanned += k + 1
			end := from + k + 1 // just past the closing quote
			lx.advance(end, utf8.RuneCountInString(s[:end]))
			return s[1 : end-1], nil
		}
		return "", &syntaxError{col, "unterminated ' string"}
	}
	var b strings.Builder
	lx.advance(1, 1)
	for lx.pos < len(lx.line) {
		if err := lx.interrupted(); err != nil {
			return "", err
		}
		s := lx.line[lx.pos:]
		c := s[0]
		lx.scanned++
		switch {
		case c == '"':
			lx.advance(1, 1)
			return b.String(), nil
		case c != '\\':
			b.WriteByte(c)
			runes := 0
			if utf8.RuneStart(c) {
				runes = 1
			}
			lx.advance(1, runes)
			continue
		}
		// An escape: strconv.UnquoteChar knows Go's full set and returns
		// \x and octal escapes as single bytes, which is what a key of
		// arbitrary bytes needs.
		if len(s) < 2 {
			return "", &syntaxError{lx.col, "unterminated \" string"}
		}
		r, multibyte, tail, err := strconv.UnquoteChar(s, '"')
		if err != nil {
			return "", &syntaxError{lx.col, fmt.Sprintf("bad escape %s", escapePrefix(s))}
		}
		if multibyte {
			b.WriteRune(r)
		} else {
			b.WriteByte(byte(r))
		}
		n := len(s) - len(tail) // an escape is ASCII: one column per byte
		lx.scanned += n
		lx.advance(n, n)
	}
	return "", &syntaxError{col, "unterminated \" string"}
}

// escapePrefix shows the offending escape in an error: the backslash and
// up to the few characters an escape can span.
func escapePrefix(s string) string {
	n := 2
	switch {
	case len(s) > 1 && (s[1] == 'x'):
		n = 4
	case len(s) > 1 && s[1] == 'u':
		n = 6
	case len(s) > 1 && s[1] == 'U':
		n = 10
	case len(s) > 1 && s[1] >= '0' && s[1] <= '7':
		n = 4
	}
	n = min(n, len(s))
	// Stop at the closing quote so the message does not run on.
	if k := strings.IndexByte(s[1:n], '"'); k >= 0 {
		n = k + 1
	}
	return s[:n]
}

// wordBytes turns a key or value argument into bytes: quoted words as
// written, unquoted "0x..." as hex, other unquoted words as typed.
func wordBytes(t token) ([]byte, error) {
	if t.quoted || !(strings.HasPrefix(t.text, "0x") || strings.HasPrefix(t.text, "0X")) {
		return []byte(t.text), nil
	}
	h := t.text[2:]
	if len(h)%2 != 0 {
		return nil, &syntaxError{t.col, fmt.Sprintf("hex literal %s has an odd number of digits (quote it for the text %q)", t.text, t.text)}
	}
	out := make([]byte, len(h)/2)
	for i := 0; i < len(h); i += 2 {
		hi, ok1 := unhex(h[i])
		lo, ok2 := unhex(h[i+1])
		if !ok1 || !ok2 {
			return nil, &syntaxError{t.col, fmt.Sprintf("hex literal %s has a non-hex digit (quote it for the text %q)", t.text, t.text)}
		}
		out[i/2] = hi<<4 | lo
	}
	return out, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// formatBytes renders a key or value for output, keeping S1. A byte
// string that reads back as itself when typed as a plain word is shown
// bare; anything else (empty, spaces, quotes, control bytes, invalid UTF-8,
// a leading '#' or "0x", scan's keyword "limit") is shown as a
// double-quoted string with Go escapes: printable runes as themselves,
// \n \t \r \\ \" by name, other bytes as \xHH.
func formatBytes(b []byte) string {
	if isPlainWord(b) {
		return string(b)
	}
	return formatQuoted(b)
}

// formatQuoted renders b double-quoted with escapes, whatever it holds.
func formatQuoted(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&sb, `\x%02x`, b[i])
		case r == '"':
			sb.WriteString(`\"`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r < utf8.RuneSelf && (r < 0x20 || r == 0x7f):
			fmt.Fprintf(&sb, `\x%02x`, b[i])
		case r == ' ' || unicode.IsPrint(r):
			sb.WriteRune(r)
		default:
			// A valid but unprintable code point (U+200B and friends):
			// its bytes, escaped, so nothing invisible reaches the screen.
			for _, c := range b[i : i+size] {
				fmt.Fprintf(&sb, `\x%02x`, c)
			}
		}
		i += size
	}
	sb.WriteByte('"')
	return sb.String()
}

// isPlainWord reports whether b, typed unquoted, reads back as exactly b
// in any argument position. scan's keyword "limit" does not: bare, it is
// the keyword, so it is always shown quoted.
func isPlainWord(b []byte) bool {
	if len(b) == 0 || b[0] == '#' || len(b) >= 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') ||
		string(b) == "limit" {
		return false
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 || !unicode.IsPrint(r) || unicode.IsSpace(r) ||
			r == '"' || r == '\'' || r == ';' {
			return false
		}
		i += size
	}
	return true
}
