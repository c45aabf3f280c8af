package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// longLines are 200k-character lines of every shape the lexer handles:
// one huge word, many words and statements, a huge quoted string full of
// escapes and multibyte runes, many quoted words.
func longLines(n int) map[string]string {
	return map[string]string{
		"one plain word":    "put k " + strings.Repeat("v", n),
		"many words":        strings.Repeat("put k v; ", n/9),
		"escaped string":    `put k "` + strings.Repeat(`é\x00\u00e9\"`, n/16) + `"`,
		"literal string":    "put k '" + strings.Repeat("é", n) + "'",
		"many quoted words": strings.Repeat(`"a" 'b' `, n/8),
	}
}

// The lexer used to recount the runes from the start of the line at every
// step (a 200k-character line took 14 s). It now decodes each byte once:
// its work counter stays within a constant factor of the line's length.
func TestSplitStatementsIsLinear(t *testing.T) {
	for name, line := range longLines(200_000) {
		lx := &lexer{ctx: context.Background(), line: line, col: 1}
		if _, err := lx.statements(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if lx.scanned > 2*len(line) {
			t.Errorf("%s: %d bytes decoded for a %d-byte line, want at most twice its length", name, lx.scanned, len(line))
		}
	}
}

// The same lines end in well under a second (they took seconds each when
// the lexer was quadratic); the bound is generous so a loaded machine
// cannot trip it.
func TestSplitStatementsLongLineIsFast(t *testing.T) {
	for name, line := range longLines(200_000) {
		start := time.Now()
		if _, err := splitStatements(line); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: %v to lex a %d-byte line", name, d, len(line))
		}
	}
}

// Columns are still exact at the end of a long line of multibyte runes.
func TestSplitStatementsColumnAtEndOfLongLine(t *testing.T) {
	line := strings.Repeat("é ", 50_000) + `"a"b`
	_, err := splitStatements(line)
	var se *syntaxError
	if !errors.As(err, &se) || se.col != 100_000+4 {
		t.Fatalf("error %v, want a syntax error at column %d", err, 100_000+4)
	}
	line = strings.Repeat("é", 70_000) + ` "\q"`
	if _, err := splitStatements(line); !errors.As(err, &se) || se.col != 70_000+3 {
		t.Fatalf("error %v, want a bad escape at column %d", err, 70_000+3)
	}
}

// A cancelled context stops the lexer within a few thousand bytes, in
// every kind of token (Ctrl-C on a pasted line).
func TestSplitStatementsStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, line := range longLines(200_000) {
		lx := &lexer{ctx: ctx, line: line, col: 1, nextCheck: 10} // first look inside the first long token
		if _, err := lx.statements(); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: err = %v, want context.Canceled", name, err)
		}
		if lx.pos > 2*lexCheckEvery {
			t.Errorf("%s: read %d bytes after cancellation, want at most %d", name, lx.pos, 2*lexCheckEvery)
		}
	}
}
