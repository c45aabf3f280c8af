package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"
	"github.com/sievekv/sievekv/kv"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK      = 0
	exitFailed  = 1 // a command failed, or the database could not be opened
	exitUsage   = 2 // bad flags
	defaultDir  = "./sievekv-data"
	promptText  = "sievekv> "
	historyEnv  = "KVSHELL_HISTORY"
	historyName = ".kvshell_history"
)

type config struct {
	dir      string
	commands string
	// script is set when -c was given, even empty: a script passing an
	// empty variable to -c must not end up reading stdin or a prompt.
	script   bool
	json     bool
	filter   string
	readOnly bool
	// existing is kv.Options.ErrorIfNotExists: open a DB that is there,
	// never create one (a mistyped -dir, or a directory of other files).
	existing bool
	// rangeFilterBits is kv.Options.RangeFilterBitsPerKey (0: none).
	rangeFilterBits float64
}

// filterNames lists every filter -filter accepts, from kv's vocabulary.
func filterNames() string { return strings.Join(kv.FilterTypeNames(), ", ") }

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("kvshell", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dir, "dir", defaultDir, "database directory (created if missing)")
	fs.StringVar(&c.commands, "c", "", "run these commands (separated by ';' or newlines) and exit")
	fs.BoolVar(&c.json, "json", false, "print results as JSON lines")
	fs.StringVar(&c.filter, "filter", kv.FilterName(kv.FilterAuto),
		"filter built into new tables: "+filterNames())
	fs.BoolVar(&c.readOnly, "readonly", false, "open the database read-only (writes fail)")
	fs.BoolVar(&c.existing, "existing", false, "open only an existing database: fail rather than create one in -dir")
	fs.Float64Var(&c.rangeFilterBits, "range-filter-bits", 0,
		"bits per key of the range filter built into new tables, 3 to 48 (0: none); bounded scans skip tables it rules out")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: kvshell [flags]

kvshell opens a sievekv database and reads commands. When stdin is a
terminal it gives a prompt with line editing, tab completion and history
(~/%s, or the file $%s names). Otherwise it runs one
command per line from stdin ('#' starts a comment), or the -c commands,
and stops at the first that fails. Type "help" for the commands.

Exit status: 0 when every command succeeded, 1 when one failed (its error
is on stderr) or the database could not be opened, 2 for bad flags.

flags:
`, historyName, historyEnv)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (commands go in -c '...' or on stdin)", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) { c.script = c.script || f.Name == "c" })
	// kv.Open would refuse it too, but as an open failure (exit 1), not
	// as the bad flag it is.
	if b := c.rangeFilterBits; b != 0 && !(b >= 3 && b <= 48) {
		return nil, fmt.Errorf("-range-filter-bits %v: want 3 to 48, or 0 for none", b)
	}
	return c, nil
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "kvshell: %v\n", err)
		return exitUsage
	}
	filter, err := kv.ParseFilterType(cfg.filter)
	if err != nil {
		fmt.Fprintf(stderr, "kvshell: -filter %q: want one of %s\n", cfg.filter, filterNames())
		return exitUsage
	}
	openOpts := kv.Options{Filter: filter, ReadOnly: cfg.readOnly, ErrorIfNotExists: cfg.existing,
		RangeFilterBitsPerKey: cfg.rangeFilterBits}
	db, err := kv.Open(cfg.dir, &openOpts)
	if err != nil {
		fmt.Fprintf(stderr, "kvshell: %s\n", oneLine(describeOpenError(cfg, err)))
		return exitFailed
	}
	in := NewInterp(db, stdout, stderr)
	in.json, in.readOnly = cfg.json, cfg.readOnly
	in.check = &checkTarget{dir: cfg.dir, opts: openOpts}
	in.progress = isTerminal(stderr)

	var status int
	switch {
	case cfg.script:
		status = runScript(in, strings.NewReader(cfg.commands), "-c", stderr)
	case readline.IsTerminal(int(stdin.Fd())):
		status = interactive(in, cfg, stdin, stdout, stderr)
	default:
		status = runScript(in, stdin, "stdin", stderr)
	}
	// in.db, not db: check closes and reopens the database.
	if in.db != nil {
		if err := in.db.Close(); err != nil {
			fmt.Fprintf(stderr, "kvshell: closing %s: %s\n", cfg.dir, oneLine(err.Error()))
			status = exitFailed
		}
	}
	return status
}

// describeOpenError turns an Open failure into the one line a person can
// act on.
func describeOpenError(cfg *config, err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, kv.ErrLocked):
		return fmt.Sprintf("%s is in use by another process (a writer needs the database to itself, read-only opens share it only with each other; close the other kvshell or program first)", cfg.dir)
	case errors.Is(err, kv.ErrCorruption):
		return fmt.Sprintf("%s: the database is damaged and cannot be opened: %s", cfg.dir, msg)
	case cfg.readOnly && errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("%s: no database there to open read-only (drop -readonly to create one)", cfg.dir)
	case errors.Is(err, kv.ErrDBDoesNotExist):
		return fmt.Sprintf("%s: no database there, and -existing forbids creating one (nothing was written)", cfg.dir)
	}
	return fmt.Sprintf("cannot open %s: %s", cfg.dir, msg)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && readline.IsTerminal(int(f.Fd()))
}

// runScript runs commands one line at a time, stopping at the first that
// fails (S3: a later command may depend on it). name labels error lines.
func runScript(in *Interp, r io.Reader, name string, stderr io.Writer) int {
	br := bufio.NewReader(r)
	for lineNo := 1; ; lineNo++ {
		line, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			fmt.Fprintf(stderr, "kvshell: reading %s: %v\n", name, rerr)
			return exitFailed
		}
		line = strings.TrimRight(line, "\r\n")
		if err := execInterruptible(in, line); err != nil {
			if err == errQuit {
				return exitOK
			}
			fmt.Fprintf(stderr, "kvshell: %s line %d: %s\n", name, lineNo, oneLine(err.Error()))
			return exitFailed
		}
		if rerr == io.EOF {
			return exitOK
		}
	}
}

// execInterruptible runs one line with Ctrl-C (SIGINT) turned into a
// cancelled context, so a long load, scan or count stops cleanly with an
// error. The handler is installed only while the command runs: at any
// other moment (a script blocked reading stdin, say) Ctrl-C keeps its
// default meaning and ends the process.
func execInterruptible(in *Interp, line string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return in.Exec(ctx, line)
}

// historyPath is where readline keeps history across sessions: $KVSHELL_HISTORY,
// else ~/.kvshell_history, else nowhere.
func historyPath() string {
	if p, ok := os.LookupEnv(historyEnv); ok {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, historyName)
}

// completer offers command names, then each command's keywords (help's
// are the command names, explain's is get, scan's is limit).
func completer() *readline.PrefixCompleter {
	var items []readline.PrefixCompleterInterface
	for _, c := range commandTable {
		for _, name := range append([]string{c.name}, c.aliases...) {
			var sub []readline.PrefixCompleterInterface
			for _, w := range c.complete {
				sub = append(sub, readline.PcItem(w))
			}
			items = append(items, readline.PcItem(name, sub...))
		}
	}
	return readline.NewPrefixCompleter(items...)
}

// interactive reads commands with line editing until quit, exit or Ctrl-D.
// No error ends the session (S2): each is printed on one line and the
// prompt comes back. Ctrl-C clears the line at the prompt and interrupts a running
// load, scan or count.
func interactive(in *Interp, cfg *config, stdin *os.File, stdout, stderr io.Writer) int {
	rl, err := readline.NewEx(&readline.Config{
		Prompt:            promptText,
		HistoryFile:       historyPath(),
		AutoComplete:      completer(),
		InterruptPrompt:   "^C",
		EOFPrompt:         "",
		HistorySearchFold: true,
		Stdin:             stdin,
		Stdout:            stdout,
		Stderr:            stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "kvshell: terminal: %v\n", err)
		return exitFailed
	}
	defer rl.Close()
	mode := ""
	if cfg.readOnly {
		mode = ", read-only"
	}
	filters := cfg.filter + " filters"
	if cfg.filter == kv.FilterName(kv.FilterAuto) {
		filters = "filters chosen per table (auto)"
	}
	fmt.Fprintf(stdout, "sievekv shell on %s (new tables get %s%s). Type help for commands, Ctrl-D to leave.\n",
		cfg.dir, filters, mode)
	for {
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			continue
		case errors.Is(err, io.EOF):
			return exitOK
		case err != nil:
			fmt.Fprintf(stderr, "kvshell: terminal: %v\n", err)
			return exitFailed
		}
		err = execInterruptible(in, line)
		if err == errQuit {
			return exitOK
		}
		if err != nil {
			fmt.Fprintf(stderr, "error: %s\n", oneLine(err.Error()))
		}
	}
}
