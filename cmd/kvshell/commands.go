package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"github.com/sievekv/sievekv/internal/humanize"
	"github.com/sievekv/sievekv/kv"
)

// command is one entry of the command table. Adding a command (say
// "check") is one more entry in commandTable: help, completion,
// suggestions and argument-count checks all read the table.
type command struct {
	name    string
	aliases []string
	usage   string // the synopsis, e.g. "get KEY"
	summary string // one line for the help list
	help    string // a few lines for "help NAME"
	// minArgs, maxArgs bound the argument count; maxArgs -1 is unbounded.
	minArgs, maxArgs int
	// complete lists words tab completion offers after the name.
	complete []string
	run      func(in *Interp, ctx context.Context, args []token) error
}

// commandTable is filled in init: help's entry reads the table itself.
var commandTable []*command

func init() {
	commandTable = []*command{
		{name: "get", usage: "get KEY", summary: "show the value of KEY",
			help:    "Prints the newest value of KEY, or (not found).",
			minArgs: 1, maxArgs: 1, run: (*Interp).cmdGet},
		{name: "put", aliases: []string{"set"}, usage: "put KEY VALUE", summary: "set KEY to VALUE (alias: set)",
			help:    "Writes KEY = VALUE durably (the write-ahead log is synced before OK).",
			minArgs: 2, maxArgs: 2, run: (*Interp).cmdPut},
		{name: "del", aliases: []string{"delete"}, usage: "del KEY", summary: "delete KEY (alias: delete)",
			help:    "Deletes KEY durably. Deleting an absent key is not an error.",
			minArgs: 1, maxArgs: 1, run: (*Interp).cmdDel},
		{name: "delrange", usage: "delrange START END", summary: "delete every key in [START, END)",
			help: "Deletes every key from START (inclusive) to END (exclusive) durably, with one\n" +
				"range tombstone however many keys that is. START must sort before END.",
			minArgs: 2, maxArgs: 2, run: (*Interp).cmdDelRange},
		{name: "scan", usage: "scan [START [END]] [limit N]", summary: "list keys in [START, END) with their values",
			help: "Lists keys from START (inclusive) to END (exclusive) in order, one \"KEY VALUE\" per line,\n" +
				fmt.Sprintf("at most N of them (default %d; limit 0 means no limit).", defaultScanLimit),
			minArgs: 0, maxArgs: 4, complete: []string{"limit"}, run: (*Interp).cmdScan},
		{name: "count", usage: "count [START [END]]", summary: "count keys in [START, END)",
			help:    "Counts the live keys from START (inclusive) to END (exclusive).",
			minArgs: 0, maxArgs: 2, run: (*Interp).cmdCount},
		{name: "du", usage: "du [START [END]]", summary: "estimate the table bytes keys in [START, END) take",
			help: "Estimates the bytes of table files that the keys from START (inclusive) to END\n" +
				"(exclusive) take, from the tables' indexes (no data read): tables inside the\n" +
				"range count whole, tables across an edge their share. Writes still in the\n" +
				"memtable are not counted until a flush; overwritten and deleted versions are,\n" +
				"until a compaction drops them.",
			minArgs: 0, maxArgs: 2, run: (*Interp).cmdDu},
		{name: "load", usage: "load N [VALUESIZE]", summary: "bulk-load N generated keys",
			help: fmt.Sprintf("Writes N keys %s, %s, ... with generated values of\n", loadKey(0), loadKey(1)) +
				fmt.Sprintf("VALUESIZE bytes (default %d), in batches, and reports the rate. Loading again\n", defaultValueSize) +
				"overwrites the same keys. Ctrl-C stops it between batches.",
			minArgs: 1, maxArgs: 2, run: (*Interp).cmdLoad},
		{name: "flush", usage: "flush", summary: "write the memtable out as an L0 table",
			help:    "Flushes the in-memory writes to a new level-0 table.",
			minArgs: 0, maxArgs: 0, run: (*Interp).cmdFlush},
		{name: "compact", usage: "compact [START END]", summary: "compact tables overlapping [START, END]",
			help:    "Flushes, then moves every key in [START, END] (every key without arguments)\ndown to the bottom level, rewriting at each level only what overlaps the range,\nand drops overwritten values and deleted keys no snapshot needs.",
			minArgs: 0, maxArgs: 2, run: (*Interp).cmdCompact},
		{name: "stats", usage: "stats", summary: "show levels, tables, cache, WAL and filter counters",
			help:    "Shows the engine's metrics: tables and bytes per level, memtables, WAL,\nblock cache, filter memory and the reads the filters avoided since the database\nwas opened: at the shell's start, or by the last check, which reopens it.",
			minArgs: 0, maxArgs: 0, run: (*Interp).cmdStats},
		{name: "explain", usage: "explain get KEY|scan START END", summary: "show what a get of KEY (or a scan of [START, END)) consults",
			help: "explain get KEY runs get KEY and lists every source it consulted in order:\n" +
				"memtables, then tables (level, file), whether each table's filter said\n" +
				"definitely-absent (a read avoided), and the data blocks read from disk or served\n" +
				"from the block cache. explain scan START END lists the tables whose key span\n" +
				"meets [START, END) and which of them their range filter rules out (skipped\n" +
				"without a block read; tables need -range-filter-bits when written).",
			minArgs: 2, maxArgs: 3, complete: []string{"get", "scan"}, run: (*Interp).cmdExplain},
		{name: "tables", usage: "tables", summary: "list the live tables",
			help:    "Lists each table: level, file number, entries, size, filter type, filter\nbits per key and key range.",
			minArgs: 0, maxArgs: 0, run: (*Interp).cmdTables},
		{name: "check", usage: "check", summary: "verify every checksum and invariant of the database",
			help: "Closes the database, verifies the MANIFEST, every table (checksums, key order,\n" +
				"bounds) and every WAL that recovery would replay, lists what is wrong, and\n" +
				"opens the database again (stats' counters start again from 0). Fails if\n" +
				"anything is damaged.",
			minArgs: 0, maxArgs: 0, run: (*Interp).cmdCheck},
		{name: "checkpoint", usage: "checkpoint DIR", summary: "write a consistent, openable copy of the database to DIR",
			help: "Flushes, then writes into DIR (which must not exist or be empty) a copy of the\n" +
				"database as of that moment: tables hard-linked where possible, copied otherwise,\n" +
				"and a MANIFEST of their own. Open DIR as a database; it does not need the original.",
			minArgs: 1, maxArgs: 1, run: (*Interp).cmdCheckpoint},
		{name: "help", usage: "help [COMMAND]", summary: "list commands, or describe one",
			minArgs: 0, maxArgs: 1, run: (*Interp).cmdHelp},
		{name: "quit", aliases: []string{"exit"}, usage: "quit", summary: "leave the shell (alias: exit, or Ctrl-D)",
			help:    "Closes the database and leaves the shell.",
			minArgs: 0, maxArgs: 0, run: func(*Interp, context.Context, []token) error { return errQuit }},
	}
	for _, c := range commandTable {
		if c.name == "help" {
			c.complete = commandNames()
		}
	}
}

// lookup finds a command by name or alias.
func lookup(name string) *command {
	for _, c := range commandTable {
		if c.name == name || slices.Contains(c.aliases, name) {
			return c
		}
	}
	return nil
}

// commandNames lists every name and alias, for completion and suggestions.
func commandNames() []string {
	var names []string
	for _, c := range commandTable {
		names = append(names, c.name)
		names = append(names, c.aliases...)
	}
	return names
}

const (
	defaultScanLimit = 100
	defaultValueSize = 100
	maxLoad          = 100_000_000
	maxValueSize     = 1 << 20
	// loadBatch is how many keys one load batch commits: large enough that
	// the per-commit cost vanishes, small enough that Ctrl-C and the bar
	// react at once.
	loadBatch = 1000
)

func (in *Interp) cmdGet(_ context.Context, args []token) error {
	key, err := wordBytes(args[0])
	if err != nil {
		return err
	}
	v, err := in.db.Get(key)
	switch {
	case errors.Is(err, kv.ErrNotFound):
		if in.json {
			return in.emitJSON(getRecord{Cmd: "get", Key: key, Found: false})
		}
		in.printf("(not found)\n")
		return nil
	case err != nil:
		return err
	}
	if in.json {
		return in.emitJSON(getRecord{Cmd: "get", Key: key, Found: true, Value: optBytes(v)})
	}
	in.printf("%s\n", formatBytes(v))
	return nil
}

type getRecord struct {
	Cmd   string    `json:"cmd"`
	Key   jsonBytes `json:"key"`
	Found bool      `json:"found"`
	// Value is a pointer so that an empty value is shown, not omitted.
	Value *jsonBytes `json:"value,omitempty"`
}

type okRecord struct {
	Cmd string     `json:"cmd"`
	Key *jsonBytes `json:"key,omitempty"` // nil for commands without a key
	OK  bool       `json:"ok"`
}

// optBytes is a present key or value for a JSON field that may be absent:
// non-nil even when b is empty, so omitempty drops only what is missing.
func optBytes(b []byte) *jsonBytes {
	j := jsonBytes(b)
	return &j
}

// done reports a write command's outcome: err as it is, or OK (key is nil
// for commands without one).
func (in *Interp) done(cmd string, key []byte, err error) error {
	if err != nil {
		return err
	}
	if in.json {
		r := okRecord{Cmd: cmd, OK: true}
		if key != nil {
			r.Key = optBytes(key)
		}
		return in.emitJSON(r)
	}
	in.printf("OK\n")
	return nil
}

func (in *Interp) cmdPut(_ context.Context, args []token) error {
	key, val, err := wordPair(args)
	if err != nil {
		return err
	}
	return in.done("put", key, in.db.Set(key, val, kv.Sync))
}

// wordPair reads the bytes of a command's first two arguments.
func wordPair(args []token) (a, b []byte, err error) {
	if a, err = wordBytes(args[0]); err != nil {
		return nil, nil, err
	}
	if b, err = wordBytes(args[1]); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// rangePair reads a command's START and END arguments, END not sorting
// before START.
func rangePair(args []token) (start, end []byte, err error) {
	if start, end, err = wordPair(args); err != nil {
		return nil, nil, err
	}
	if string(end) < string(start) {
		return nil, nil, fmt.Errorf("END %s sorts before START %s", formatBytes(end), formatBytes(start))
	}
	return start, end, nil
}

func (in *Interp) cmdDel(_ context.Context, args []token) error {
	key, err := wordBytes(args[0])
	if err != nil {
		return err
	}
	return in.done("del", key, in.db.Delete(key, kv.Sync))
}

func (in *Interp) cmdDelRange(_ context.Context, args []token) error {
	start, end, err := wordPair(args)
	if err != nil {
		return err
	}
	return in.done("delrange", nil, in.db.DeleteRange(start, end, kv.Sync))
}

// parseRange reads [START [END]] into iterator bounds; usage names the
// command for the error.
func parseRange(args []token, usage string) (*kv.IterOptions, error) {
	o := &kv.IterOptions{}
	if len(args) > 2 {
		return nil, &usageError{"too many bounds", usage}
	}
	var err error
	switch len(args) {
	case 1:
		o.LowerBound, err = wordBytes(args[0])
	case 2:
		o.LowerBound, o.UpperBound, err = rangePair(args)
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// parseCount reads a non-negative integer argument.
func parseCount(t token, what string, limit int) (int, error) {
	n, err := strconv.Atoi(t.text)
	if err != nil || n < 0 || t.quoted {
		return 0, fmt.Errorf("%s must be a whole number, not %s", what, formatBytes([]byte(t.text)))
	}
	if n > limit {
		return 0, fmt.Errorf("%s %d is more than %d", what, n, limit)
	}
	return n, nil
}

type scanRecord struct {
	Cmd   string    `json:"cmd"`
	Key   jsonBytes `json:"key"`
	Value jsonBytes `json:"value"`
}

type scanEnd struct {
	Cmd   string `json:"cmd"`
	Count int    `json:"count"`
	// More reports that the limit stopped the scan before END.
	More bool `json:"more"`
}

func (in *Interp) cmdScan(ctx context.Context, args []token) error {
	usage := lookup("scan").usage
	limit := defaultScanLimit
	// "limit N" is recognised only as the last two words, unquoted, so a
	// key named limit is still scannable as "limit".
	if n := len(args); n >= 2 && !args[n-2].quoted && args[n-2].text == "limit" {
		var err error
		if limit, err = parseCount(args[n-1], "limit", 1<<31-1); err != nil {
			return err
		}
		args = args[:n-2]
	}
	for _, a := range args {
		if !a.quoted && a.text == "limit" {
			return &usageError{"limit must be followed by N and come last (quote \"limit\" to use it as a key)", usage}
		}
	}
	o, err := parseRange(args, usage)
	if err != nil {
		return err
	}
	it := in.db.NewIter(o)
	count, more := 0, false
	for ok := it.First(); ok; ok = it.Next() {
		if limit > 0 && count == limit {
			more = true
			break
		}
		if count%1024 == 1023 && ctx.Err() != nil {
			it.Close()
			return fmt.Errorf("interrupted after %d keys", count)
		}
		count++
		if in.json {
			if err := in.emitJSON(scanRecord{"scan", it.Key(), it.Value()}); err != nil {
				it.Close()
				return err
			}
			continue
		}
		in.printf("%s %s\n", formatBytes(it.Key()), formatBytes(it.Value()))
		if in.outErr != nil {
			// Nobody reads the rest: stop, as a failed JSON write does.
			it.Close()
			return in.outErr
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if in.json {
		return in.emitJSON(scanEnd{"scan", count, more})
	}
	switch {
	case more:
		in.printf("(first %d %s shown; more follow: add limit N, or limit 0 for all)\n", count, plural(count, "key", "keys"))
	default:
		in.printf("(%d %s)\n", count, plural(count, "key", "keys"))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

type countRecord struct {
	Cmd   string `json:"cmd"`
	Count int    `json:"count"`
}

func (in *Interp) cmdCount(ctx context.Context, args []token) error {
	o, err := parseRange(args, lookup("count").usage)
	if err != nil {
		return err
	}
	it := in.db.NewIter(o)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n%1024 == 1023 && ctx.Err() != nil {
			it.Close()
			return fmt.Errorf("interrupted after %d keys", n)
		}
		n++
	}
	if err := it.Close(); err != nil {
		return err
	}
	if in.json {
		return in.emitJSON(countRecord{"count", n})
	}
	in.printf("%d\n", n)
	return nil
}

type duRecord struct {
	Cmd   string `json:"cmd"`
	Bytes uint64 `json:"bytes"`
}

func (in *Interp) cmdDu(_ context.Context, args []token) error {
	o, err := parseRange(args, lookup("du").usage)
	if err != nil {
		return err
	}
	n, err := in.db.EstimateDiskUsage(o.LowerBound, o.UpperBound)
	if err != nil {
		return err
	}
	if in.json {
		return in.emitJSON(duRecord{"du", n})
	}
	in.printf("%s\n", humanize.Bytes(n))
	return nil
}

// loadKey is the i-th key load writes: fixed width, so key order is
// numeric order and scans read naturally.
func loadKey(i int) []byte { return fmt.Appendf(nil, "key%010d", i) }

// loadValue fills v with lowercase letters drawn from a generator seeded by
// the key number: deterministic (transcripts can show it) and printable
// (scan output stays readable), yet not one repeated byte that would
// compress to nothing and flatter the sizes in stats.
func loadValue(v []byte, i int) {
	x := uint64(i)*0x9E3779B97F4A7C15 + 1
	for j := range v {
		// xorshift64 (Marsaglia 2003): cheap and good enough for filler.
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[j] = 'a' + byte(x%26)
	}
}

type loadRecord struct {
	Cmd           string  `json:"cmd"`
	Keys          int     `json:"keys"`
	ValueSize     int     `json:"value_size"`
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	KeysPerSecond float64 `json:"keys_per_second"`
}

func (in *Interp) cmdLoad(ctx context.Context, args []token) error {
	n, err := parseCount(args[0], "N", maxLoad)
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("nothing to load: N must be at least 1")
	}
	valueSize := defaultValueSize
	if len(args) == 2 {
		if valueSize, err = parseCount(args[1], "VALUESIZE", maxValueSize); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted after 0 of %d keys", n)
	}
	var bar *progressbar.ProgressBar
	if in.progress {
		bar = progressbar.NewOptions64(int64(n),
			progressbar.OptionSetWriter(in.diag),
			progressbar.OptionSetDescription("loading"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("keys"),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	start := in.now()
	b := in.db.NewBatch()
	val := make([]byte, valueSize)
	var bytes int64
	for i := 0; i < n; {
		b.Reset()
		end := min(i+loadBatch, n)
		for ; i < end; i++ {
			k := loadKey(i)
			loadValue(val, i)
			b.Set(k, val)
			bytes += int64(len(k) + len(val))
		}
		// Only the last batch syncs, the last of the whole load or of an
		// interrupted one: one fsync makes every key written so far
		// durable, since every earlier record is before it in the WAL,
		// and the shell's writes are durable when it reports them
		// written, as put's and del's are.
		interrupted := ctx.Err() != nil
		opts := kv.NoSync
		if i == n || interrupted {
			opts = kv.Sync
		}
		if err := in.db.Apply(b, opts); err != nil {
			if bar != nil {
				bar.Exit()
			}
			return err
		}
		if bar != nil {
			bar.Set64(int64(i))
		}
		if interrupted && i < n {
			if bar != nil {
				bar.Exit()
			}
			return fmt.Errorf("interrupted after %d of %d keys (those are written)", i, n)
		}
	}
	if bar != nil {
		bar.Finish()
	}
	elapsed := in.now().Sub(start)
	rate := float64(n) / max(elapsed.Seconds(), 1e-9)
	if in.json {
		return in.emitJSON(loadRecord{"load", n, valueSize, bytes, elapsed.Seconds(), rate})
	}
	in.printf("loaded %d %s (%s) in %s: %.0f keys/s, %s/s\n", n, plural(n, "key", "keys"),
		humanize.Bytes(uint64(bytes)), elapsed.Round(time.Millisecond), rate, humanize.Bytes(uint64(float64(bytes)/max(elapsed.Seconds(), 1e-9))))
	return nil
}

func (in *Interp) cmdFlush(context.Context, []token) error {
	return in.done("flush", nil, in.db.Flush())
}

func (in *Interp) cmdCheckpoint(_ context.Context, args []token) error {
	dir, err := wordBytes(args[0])
	if err != nil {
		return err
	}
	return in.done("checkpoint", nil, in.db.Checkpoint(string(dir)))
}

func (in *Interp) cmdCompact(_ context.Context, args []token) error {
	var start, end []byte
	switch len(args) {
	case 0:
	case 2:
		var err error
		if start, end, err = rangePair(args); err != nil {
			return err
		}
	default:
		return &usageError{"give both START and END, or neither", lookup("compact").usage}
	}
	return in.done("compact", nil, in.db.Compact(start, end))
}

func (in *Interp) cmdExplain(_ context.Context, args []token) error {
	if !args[0].quoted && args[0].text == "scan" {
		return in.cmdExplainScan(args[1:])
	}
	if args[0].quoted || args[0].text != "get" {
		what := formatBytes([]byte(args[0].text))
		if args[0].quoted {
			what = formatQuoted([]byte(args[0].text))
		}
		return &usageError{fmt.Sprintf("cannot explain %s, only get or scan (typed bare)", what), lookup("explain").usage}
	}
	if len(args) != 2 {
		return &usageError{"explain get takes one KEY", lookup("explain").usage}
	}
	key, err := wordBytes(args[1])
	if err != nil {
		return err
	}
	tr, err := in.db.ExplainGet(key)
	if err != nil {
		return err
	}
	if in.json {
		if err := in.emitJSON(explainJSON(tr)); err != nil {
			return err
		}
	} else {
		in.printExplain(tr)
	}
	if tr.Err != nil {
		return tr.Err
	}
	return nil
}

// printExplain renders a trace: a header with the answer, kv's own
// per-source lines (one vocabulary with the engine docs), and a cost line
// that adds them up.
func (in *Interp) printExplain(tr *kv.GetTrace) {
	if tr.Found {
		in.printf("get %s: found %s\n", formatBytes(tr.Key), formatBytes(tr.Value))
	} else if n := len(tr.Steps); n > 0 && tr.Steps[n-1].Hit && tr.Err == nil {
		// The source that "has the key" holds its deletion.
		in.printf("get %s: not found (deleted: the newest version is a tombstone)\n", formatBytes(tr.Key))
	} else if n > 0 && tr.Steps[n-1].RangeDeleted && tr.Err == nil {
		in.printf("get %s: not found (deleted by a range tombstone)\n", formatBytes(tr.Key))
	} else {
		in.printf("get %s: not found\n", formatBytes(tr.Key))
	}
	in.printf("%s", tr.String())
	c := traceCost(tr)
	in.printf("cost: %d %s consulted, %d %s read from disk, %d from cache; filters avoided %d of %d table %s\n",
		len(tr.Steps), plural(len(tr.Steps), "source", "sources"),
		c.DataBlocks, plural(int(c.DataBlocks), "data block", "data blocks"), c.CacheHits,
		c.Avoided, c.FilterChecks, plural(int(c.FilterChecks), "read", "reads"))
}

type explainCost struct {
	DataBlocks   int64 `json:"data_blocks_read"`
	IndexBlocks  int64 `json:"index_blocks_read"`
	CacheHits    int64 `json:"cache_hits"`
	FilterChecks int64 `json:"filter_checks"`
	Avoided      int64 `json:"reads_avoided"`
}

func traceCost(tr *kv.GetTrace) explainCost {
	var c explainCost
	for _, s := range tr.Steps {
		c.DataBlocks += s.DataBlockReads
		c.IndexBlocks += s.IndexBlockReads
		c.CacheHits += s.CacheHits
		if s.FilterChecked {
			c.FilterChecks++
		}
		if s.FilterNegative {
			c.Avoided++
		}
	}
	return c
}

type explainStep struct {
	Source          string  `json:"source"`
	Level           *int    `json:"level,omitempty"` // tables only
	Table           *uint64 `json:"table,omitempty"` // tables only
	FilterChecked   bool    `json:"filter_checked"`
	FilterNegative  bool    `json:"filter_negative"`
	FilterKind      string  `json:"filter_kind,omitempty"`
	FilterFP        float64 `json:"filter_fp,omitempty"`
	DataBlockReads  int64   `json:"data_block_reads"`
	IndexBlockReads int64   `json:"index_block_reads"`
	CacheHits       int64   `json:"cache_hits"`
	Hit             bool    `json:"hit"`
	// RangeDeleted: a range tombstone in the source deletes the key.
	RangeDeleted bool `json:"range_deleted,omitempty"`
}

type explainRecord struct {
	Cmd   string        `json:"cmd"`
	Key   jsonBytes     `json:"key"`
	Found bool          `json:"found"`
	Value *jsonBytes    `json:"value,omitempty"`
	Steps []explainStep `json:"steps"`
	Cost  explainCost   `json:"cost"`
	Error string        `json:"error,omitempty"`
}

func explainJSON(tr *kv.GetTrace) explainRecord {
	r := explainRecord{Cmd: "explain", Key: tr.Key, Found: tr.Found, Steps: []explainStep{}, Cost: traceCost(tr)}
	if tr.Found {
		r.Value = optBytes(tr.Value)
	}
	if tr.Err != nil {
		r.Error = oneLine(tr.Err.Error())
	}
	for _, s := range tr.Steps {
		st := explainStep{Source: s.Source, FilterChecked: s.FilterChecked, FilterNegative: s.FilterNegative,
			FilterKind: s.FilterKind, FilterFP: s.FilterFP,
			DataBlockReads: s.DataBlockReads, IndexBlockReads: s.IndexBlockReads, CacheHits: s.CacheHits, Hit: s.Hit, RangeDeleted: s.RangeDeleted}
		if s.Source == "table" {
			st.Level, st.Table = &s.Level, &s.Table
		}
		r.Steps = append(r.Steps, st)
	}
	return r
}

type tableRecord struct {
	Cmd           string    `json:"cmd"`
	Level         int       `json:"level"`
	Table         uint64    `json:"table"`
	Entries       uint64    `json:"entries"`
	Size          uint64    `json:"size"`
	Filter        string    `json:"filter"`
	FilterKind    string    `json:"filter_kind"`
	FilterBytes   uint64    `json:"filter_bytes"`
	FilterBitsKey float64   `json:"filter_bits_per_key"`
	FilterFP      float64   `json:"filter_fp"`
	Smallest      jsonBytes `json:"smallest"`
	Largest       jsonBytes `json:"largest"`
}

func (in *Interp) cmdTables(context.Context, []token) error {
	ts, err := in.db.Tables()
	if err != nil {
		return err
	}
	if in.json {
		for _, t := range ts {
			if err := in.emitJSON(tableRecord{"tables", t.Level, t.FileNum, t.Entries, t.Size, t.Filter, t.FilterKind,
				t.FilterBytes, t.FilterBitsPerKey(), t.FilterFP, t.Smallest, t.Largest}); err != nil {
				return err
			}
		}
		return nil
	}
	if len(ts) == 0 {
		in.printf("(no tables: writes are still in the memtable; flush writes them out)\n")
		return nil
	}
	in.printf("%-5s %-6s %8s %10s  %-24s %8s %9s  %s\n", "level", "table", "entries", "size", "filter", "bits/key", "FP", "keys")
	for _, t := range ts {
		in.printf("L%-4d %06d %8d %10s  %-24s %8.2f %9.5f  %s .. %s\n", t.Level, t.FileNum, t.Entries, humanize.Bytes(t.Size),
			t.FilterKind, t.FilterBitsPerKey(), t.FilterFP, formatBytes(t.Smallest), formatBytes(t.Largest))
	}
	return nil
}

func bitsPerKey(filterBytes, entries uint64) float64 {
	if entries == 0 {
		return 0
	}
	return float64(filterBytes) * 8 / float64(entries)
}

func (in *Interp) cmdHelp(_ context.Context, args []token) error {
	if len(args) == 1 {
		c := lookup(args[0].text)
		if c == nil {
			return unknownCommand(args[0].text)
		}
		if in.json {
			return in.emitJSON(helpRecord{"help", c.name, c.aliases, c.usage, c.summary, c.help})
		}
		in.printf("usage: %s\n", c.usage)
		if c.help != "" {
			in.printf("%s\n", c.help)
		} else {
			in.printf("%s\n", c.summary)
		}
		if len(c.aliases) > 0 {
			in.printf("aliases: %s\n", strings.Join(c.aliases, ", "))
		}
		return nil
	}
	if in.json {
		for _, c := range commandTable {
			if err := in.emitJSON(helpRecord{"help", c.name, c.aliases, c.usage, c.summary, c.help}); err != nil {
				return err
			}
		}
		return nil
	}
	in.printf("commands:\n")
	for _, c := range commandTable {
		in.printf("  %-30s %s\n", c.usage, c.summary)
	}
	in.printf("%s", syntaxHelp)
	return nil
}

type helpRecord struct {
	Cmd     string   `json:"cmd"`
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
	Usage   string   `json:"usage"`
	Summary string   `json:"summary"`
	Help    string   `json:"help,omitempty"`
}

const syntaxHelp = `keys and values: plain words (abc), "double quoted" with Go escapes ("a b", "\x00\xff", "\n"),
  'single quoted' taken literally, or hex (0x00ff). Quoted words are never hex.
several commands on one line: separate them with ';'. A word starting with # starts a comment.
output shows a key or value bare when it reads back as itself, else double quoted with escapes.
`

func isUTF8(b []byte) bool { return utf8.Valid(b) }
