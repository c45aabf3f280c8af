package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sievekv/sievekv/kv"
)

// Interp runs shell commands against one open DB. It knows nothing about
// terminals: main feeds it lines from readline, -c or stdin, and tests feed
// it lines directly, so every command is testable without a terminal.
//
// An Interp is for one goroutine at a time.
type Interp struct {
	db *kv.DB
	// out receives results; diag receives the load progress bar. Errors
	// are not written by the Interp: Exec returns them and the caller
	// decides where they go (stderr in main, the transcript in tests).
	out, diag io.Writer
	// json makes every result one JSON object per line.
	json bool
	// progress shows a progress bar on diag during load (main sets it only
	// when stderr is a terminal, so logs stay clean).
	progress bool
	// readOnly is how the DB was opened, for a hint on write errors.
	readOnly bool
	// now is the clock load measures its rate with; tests fix it so the
	// rate in a transcript is deterministic.
	now func() time.Time
	// check lets the check command close and reopen the database.
	check *checkTarget
	// outErr is the first failed write of a text result during the
	// running command (printf), which the command then fails with, as a
	// JSON record's failed write does.
	outErr error
}

// errQuit is returned by quit and exit: the caller stops reading commands.
var errQuit = errors.New("quit")

// NewInterp returns an interpreter over db writing results to out.
func NewInterp(db *kv.DB, out, diag io.Writer) *Interp {
	return &Interp{db: db, out: out, diag: diag, now: time.Now}
}

// Exec runs every statement of one input line (statements are separated by
// ';'), stopping at the first that fails. It returns errQuit after quit or
// exit. A failed statement's error is one line naming the command.
func (in *Interp) Exec(ctx context.Context, line string) error {
	stmts, err := splitStatementsContext(ctx, line)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		if err := in.run(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// cmdError is a failed command: its name and why, on one line (S2).
type cmdError struct {
	cmd string
	err error
}

func (e *cmdError) Error() string { return e.cmd + ": " + oneLine(e.err.Error()) }
func (e *cmdError) Unwrap() error { return e.err }

// usageError is a command called with the wrong arguments.
type usageError struct {
	msg   string
	usage string
}

func (e *usageError) Error() string { return e.msg + " (usage: " + e.usage + ")" }

func (in *Interp) run(ctx context.Context, st []token) error {
	name := st[0].text
	c := lookup(name)
	switch {
	case c != nil && st[0].quoted:
		return fmt.Errorf("command names are typed bare: %s, not %s", name, formatQuoted([]byte(name)))
	case c == nil:
		return unknownCommand(name)
	}
	if in.db == nil && c.name != "help" && c.name != "quit" {
		// A check could not reopen the database: nothing else can run.
		return &cmdError{c.name, errReopen}
	}
	args := st[1:]
	if len(args) < c.minArgs || c.maxArgs >= 0 && len(args) > c.maxArgs {
		return &cmdError{c.name, &usageError{"wrong number of arguments", c.usage}}
	}
	in.outErr = nil
	err := c.run(in, ctx, args)
	if err == nil && in.outErr != nil {
		err = in.outErr
	}
	if err != nil {
		if err == errQuit {
			return err
		}
		return &cmdError{c.name, in.explainError(err)}
	}
	return nil
}

// explainError adds what a person needs to act on an engine error.
func (in *Interp) explainError(err error) error {
	switch {
	case errors.Is(err, kv.ErrReadOnly) && in.readOnly:
		return fmt.Errorf("%w (the shell was started with -readonly)", err)
	case errors.Is(err, kv.ErrCorruption) && !strings.Contains(err.Error(), "corrupt"):
		return fmt.Errorf("corruption: %w", err)
	}
	return err
}

// oneLine keeps an error to one line of printable text, whatever a lower
// layer put in it (S2): line breaks become "; ", and every other control
// character and invalid UTF-8 byte is shown escaped, so that bytes typed
// into a name or an escape (a CR, an ESC sequence) cannot overwrite the
// line or drive the terminal when the error echoes them.
func oneLine(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case strings.HasPrefix(s[i:], "\r\n"):
			b.WriteString("; ")
			size = 2
		case r == '\n':
			b.WriteString("; ")
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) && r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r): // C1, U+0080 to U+009F
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// maxEchoedName bounds how much of an unknown command word its error
// repeats: a value pasted without its put can be megabytes.
const maxEchoedName = 64

func unknownCommand(name string) error {
	shown := formatBytes([]byte(name))
	if len(name) > maxEchoedName {
		shown = formatBytes([]byte(name[:maxEchoedName])) + fmt.Sprintf("... (%d bytes)", len(name))
	}
	msg := fmt.Sprintf("unknown command %s", shown)
	if s := suggest(name); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else {
		msg += " (type help for the list)"
	}
	return errors.New(msg)
}

// printf writes a text result. A failed write (a full disk, a closed
// pipe) is kept for the command to fail with: exit status 0 means every
// result reached its reader.
func (in *Interp) printf(format string, args ...any) {
	if _, err := fmt.Fprintf(in.out, format, args...); err != nil && in.outErr == nil {
		in.outErr = err
	}
}

// emitJSON writes one JSON line. Every record starts with "cmd" (each
// record type below has it as its first field), so a consumer can
// dispatch on it.
func (in *Interp) emitJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = in.out.Write(b)
	return err
}

// jsonBytes is a key or value in JSON output: a JSON string when the bytes
// are valid UTF-8 (control characters escaped by JSON itself), otherwise
// {"hex": "..."} so no byte is lost to U+FFFD replacement.
type jsonBytes []byte

// MarshalJSON implements json.Marshaler.
func (b jsonBytes) MarshalJSON() ([]byte, error) {
	if isUTF8(b) {
		return json.Marshal(string(b))
	}
	return json.Marshal(struct {
		Hex string `json:"hex"`
	}{fmt.Sprintf("%x", []byte(b))})
}
