package compaction

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/datadriven"
	"github.com/sievekv/sievekv/internal/manifest"
)

func table(num uint64, size uint64, lo, hi string) *manifest.TableMetadata {
	return &manifest.TableMetadata{FileNum: num, Size: size,
		Smallest: base.MakeInternalKey([]byte(lo), base.SeqNum(num), base.KindSet),
		Largest:  base.MakeInternalKey([]byte(hi), base.SeqNum(num), base.KindSet)}
}

// sortedLevel makes n adjacent non-overlapping tables of size bytes each,
// the i-th holding keys k(i*10)..k(i*10+9).
func sortedLevel(first uint64, n int, size uint64) []*manifest.TableMetadata {
	var ts []*manifest.TableMetadata
	for i := 0; i < n; i++ {
		ts = append(ts, table(first+uint64(i), size, fmt.Sprintf("k%06d", i*10), fmt.Sprintf("k%06d", i*10+9)))
	}
	return ts
}

// TestPickerScenarios runs testdata/compaction_picker_*: level targets,
// scores, picks (least overlap first, trivial moves, purges, tombstone ages) and output splitting,
// on trees described in the files. Regenerate with -update after a
// deliberate policy change, and review the diff.
func TestPickerScenarios(t *testing.T) {
	for _, name := range []string{"targets", "pick", "split"} {
		t.Run(name, func(t *testing.T) {
			env := &pickerEnv{opts: DefaultOptions()}
			env.reset()
			datadriven.RunTest(t, "testdata/compaction_picker_"+name, env.run)
		})
	}
}

// pickerEnv is the state one testdata file builds up: options, a tree and
// a picker (whose round-robin pointers carry from one pick to the next
// until the next define).
type pickerEnv struct {
	opts     Options
	v        *manifest.Version
	p        *Picker
	nextFile uint64 // file numbers of outputs apply makes
}

// pickerNow is the clock of every scenario: tombstone ages are relative to
// it.
const pickerNow = int64(1_000_000 * time.Second)

func (e *pickerEnv) reset() {
	e.v = &manifest.Version{}
	e.p = &Picker{Opts: e.opts, Now: func() int64 { return pickerNow }}
}

// apply replaces c's inputs by one output table at the output level
// spanning their range, of their total size, without their tombstones (as
// a compaction to the bottom writes): enough for "pick repeat=n apply" to
// show where the picker goes next.
func (e *pickerEnv) apply(c *Compaction) {
	in := map[*manifest.TableMetadata]bool{}
	for _, ts := range c.Inputs {
		for _, t := range ts {
			in[t] = true
		}
	}
	all := slices.Concat(c.Inputs[0], c.Inputs[1])
	lo, hi := keyRange(all)
	e.nextFile++
	out := table(e.nextFile, manifest.TotalSize(all), string(lo), string(hi))
	if c.OutputLevel < manifest.NumLevels-1 {
		var shadowed uint64
		oldest := int64(0)
		for _, t := range c.Inputs[0] {
			n, _ := t.ShadowedBytes()
			shadowed += n
			if tt := t.TombstoneTime(); tt != 0 && (oldest == 0 || tt < oldest) {
				oldest = tt
			}
		}
		out.SetShadowedBytes(shadowed)
		out.SetTombstoneTime(oldest)
	}
	for l := range e.v.Levels {
		e.v.Levels[l] = slices.DeleteFunc(e.v.Levels[l], func(t *manifest.TableMetadata) bool { return in[t] })
	}
	e.v.Levels[c.OutputLevel] = append(e.v.Levels[c.OutputLevel], out)
	slices.SortFunc(e.v.Levels[c.OutputLevel], func(a, b *manifest.TableMetadata) int {
		return strings.Compare(string(a.Smallest.UserKey), string(b.Smallest.UserKey))
	})
}

func (e *pickerEnv) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "options":
		// Defaults, then the arguments given.
		e.opts = DefaultOptions()
		for _, a := range d.Args {
			if len(a.Vals) != 1 {
				d.Fatalf(t, "option %s needs one value", a.Key)
			}
			n := parseSize(t, d, a.Vals[0])
			switch a.Key {
			case "l0-trigger":
				e.opts.L0Trigger = int(n)
			case "base-bytes":
				e.opts.BaseBytes = n
			case "target-file-size":
				e.opts.TargetFileSize = n
			case "max-grandparent-overlap":
				e.opts.MaxGrandparentOverlap = n
			case "purge-percent":
				e.opts.PurgeRatio = float64(n) / 100
			case "idle-permille":
				e.opts.IdleRatio = float64(n) / 1000
			case "tombstone-max-age-s":
				e.opts.TombstoneMaxAge = time.Duration(n) * time.Second
			default:
				d.Fatalf(t, "unknown option %s", a.Key)
			}
		}
		e.reset()
		return ""
	case "define":
		e.reset()
		e.define(t, d)
		return e.describe()
	case "targets":
		return e.targets(d.HasArg("check-share"))
	case "scores":
		scores := e.p.Scores(e.v)
		var b strings.Builder
		for l := 0; l < manifest.NumLevels-1; l++ {
			fmt.Fprintf(&b, "L%d %.3f\n", l, scores[l])
		}
		return b.String()
	case "pick":
		n, err := strconv.Atoi(d.ScanArg(t, "repeat", "1"))
		if err != nil {
			d.Fatalf(t, "repeat: %v", err)
		}
		var b strings.Builder
		for i := 0; i < n; i++ {
			c := e.p.Pick(e.v)
			if d.HasArg("idle") {
				c = e.p.PickIdle(e.v)
			}
			b.WriteString(describeCompaction(c))
			if c != nil && d.HasArg("apply") {
				e.apply(c)
			}
		}
		return b.String()
	case "split":
		return e.split(t, d)
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// define reads one table or run of tables per input line:
//
//	L<level> <file>:<smallest>-<largest> <size> [shadowed=<size>] [tombstone-age-s=<n>]
//	L<level> sorted first=<file> count=<n> size=<size>
//
// shadowed sets the table's estimate of the bytes its tombstones shadow
// below; tombstone-age-s makes its oldest tombstone that many seconds old.
func (e *pickerEnv) define(t *testing.T, d *datadriven.TestData) {
	for _, line := range strings.Split(d.Input, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue // an empty tree
		}
		if len(f) < 2 || !strings.HasPrefix(f[0], "L") {
			d.Fatalf(t, "bad table line %q", line)
		}
		l, err := strconv.Atoi(f[0][1:])
		if err != nil || l < 0 || l >= manifest.NumLevels {
			d.Fatalf(t, "bad level in %q", line)
		}
		if f[1] == "sorted" {
			kv := map[string]string{}
			for _, a := range f[2:] {
				k, v, _ := strings.Cut(a, "=")
				kv[k] = v
			}
			first := parseSize(t, d, kv["first"])
			count := parseSize(t, d, kv["count"])
			e.v.Levels[l] = append(e.v.Levels[l], sortedLevel(first, int(count), parseSize(t, d, kv["size"]))...)
			continue
		}
		num, rng, ok := strings.Cut(f[1], ":")
		lo, hi, ok2 := strings.Cut(rng, "-")
		if !ok || !ok2 || len(f) < 3 {
			d.Fatalf(t, "bad table line %q", line)
		}
		tm := table(parseSize(t, d, num), parseSize(t, d, f[2]), lo, hi)
		for _, a := range f[3:] {
			k, val, _ := strings.Cut(a, "=")
			switch k {
			case "shadowed":
				tm.SetShadowedBytes(parseSize(t, d, val))
			case "tombstone-age-s":
				tm.SetTombstoneTime(pickerNow - int64(parseSize(t, d, val))*int64(time.Second))
			default:
				d.Fatalf(t, "bad table attribute %q", a)
			}
		}
		e.nextFile = max(e.nextFile, tm.FileNum+1000)
		e.v.Levels[l] = append(e.v.Levels[l], tm)
	}
}

func (e *pickerEnv) describe() string {
	var b strings.Builder
	for l, ts := range e.v.Levels {
		if len(ts) > 0 {
			fmt.Fprintf(&b, "L%d: %d tables, %d bytes\n", l, len(ts), e.v.LevelSize(l))
		}
	}
	return b.String()
}

// targets prints the base level and the targets from it down, and checks
// P1's bounds. With checkShare (for a tree whose data is all at the
// bottom) it also checks that, with every level at its target, the levels
// above the bottom would hold at most 20% of the data (about 1/multiplier).
func (e *pickerEnv) targets(checkShare bool) string {
	base, maxBytes := Targets(e.v, e.opts)
	var b strings.Builder
	fmt.Fprintf(&b, "base L%d\n", base)
	var total, above uint64
	for l := 1; l < manifest.NumLevels; l++ {
		total += e.v.LevelSize(l)
	}
	for l := base; l < manifest.NumLevels; l++ {
		if maxBytes[l] == math.MaxUint64 {
			fmt.Fprintf(&b, "L%d unbounded\n", l)
			continue
		}
		fmt.Fprintf(&b, "L%d %d\n", l, maxBytes[l])
		above += maxBytes[l]
	}
	if base < 1 || base >= manifest.NumLevels {
		fmt.Fprintf(&b, "BAD: base level out of range\n")
	}
	if maxBytes[base] < e.opts.BaseBytes {
		fmt.Fprintf(&b, "BAD: base target below BaseBytes\n")
	}
	if checkShare && base < manifest.NumLevels-1 && float64(above) > 0.2*float64(total) {
		fmt.Fprintf(&b, "BAD: upper levels' targets %d exceed 20%% of the data %d\n", above, total)
	}
	for l := 1; l < base; l++ {
		if len(e.v.Levels[l]) > 0 {
			fmt.Fprintf(&b, "BAD: base level skips data at L%d\n", l)
		}
	}
	return b.String()
}

// split feeds keys to a splitter over the grandparents in level
// grandparents=L<n> of the tree, printing where it cuts: either the input's
// "<key> <output size>" lines, or keys=<n> generated keys k000000.. each
// with output size size=<n>.
func (e *pickerEnv) split(t *testing.T, d *datadriven.TestData) string {
	c := &Compaction{}
	if g := d.ScanArg(t, "grandparents", ""); g != "" {
		l, err := strconv.Atoi(strings.TrimPrefix(g, "L"))
		if err != nil || l < 0 || l >= manifest.NumLevels {
			d.Fatalf(t, "bad grandparents level %q", g)
		}
		c.Grandparents = e.v.Levels[l]
	}
	s := NewSplitter(c, e.opts)
	var b strings.Builder
	if n := d.ScanArg(t, "keys", ""); n != "" {
		size := parseSize(t, d, d.ScanArg(t, "size", "0"))
		var cuts []string
		for i := 0; i < int(parseSize(t, d, n)); i++ {
			k := fmt.Sprintf("k%06d", i)
			if s.ShouldSplit([]byte(k), size) {
				cuts = append(cuts, k)
			}
		}
		fmt.Fprintf(&b, "%d splits\n", len(cuts))
		for i := 0; i < len(cuts); i += 8 {
			fmt.Fprintf(&b, "%s\n", strings.Join(cuts[i:min(i+8, len(cuts))], " "))
		}
		return b.String()
	}
	for _, line := range strings.Split(d.Input, "\n") {
		k, sz, ok := strings.Cut(line, " ")
		if !ok {
			d.Fatalf(t, "bad split line %q", line)
		}
		verdict := "continue"
		if s.ShouldSplit([]byte(k), parseSize(t, d, sz)) {
			verdict = "split"
		}
		fmt.Fprintf(&b, "%s %s: %s\n", k, sz, verdict)
	}
	return b.String()
}

func describeCompaction(c *Compaction) string {
	if c == nil {
		return "none\n"
	}
	nums := func(ts []*manifest.TableMetadata) string {
		var s []string
		for _, t := range ts {
			s = append(s, fmt.Sprintf("%06d", t.FileNum))
		}
		return "(" + strings.Join(s, " ") + ")"
	}
	move := ""
	if c.TrivialMove {
		move = " trivial-move"
	}
	return fmt.Sprintf("L%d -> L%d %s %.3f inputs=%s+%s grandparents=%s%s\n",
		c.Level, c.OutputLevel, c.Reason, c.Score, nums(c.Inputs[0]), nums(c.Inputs[1]), nums(c.Grandparents), move)
}

// parseSize reads a count or byte size with an optional K, M or G suffix
// (powers of two).
func parseSize(t *testing.T, d *datadriven.TestData, s string) uint64 {
	shift := 0
	switch {
	case strings.HasSuffix(s, "K"):
		shift = 10
	case strings.HasSuffix(s, "M"):
		shift = 20
	case strings.HasSuffix(s, "G"):
		shift = 30
	}
	if shift > 0 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		d.Fatalf(t, "bad number %q", s)
	}
	return n << shift
}

func TestPickerOnRandomShapesStaysConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 500; trial++ {
		o := DefaultOptions()
		o.BaseBytes = 1 << 20
		p := &Picker{Opts: o}
		v := &manifest.Version{}
		num := uint64(1)
		for l := 0; l < manifest.NumLevels; l++ {
			n := rng.IntN(6)
			if l > 0 {
				v.Levels[l] = sortedLevel(num, n, uint64(rng.IntN(8<<20)+1))
			} else {
				for i := 0; i < n; i++ {
					v.Levels[0] = append(v.Levels[0], table(num+uint64(i), 1<<20, fmt.Sprintf("k%06d", rng.IntN(50)), "k000099"))
				}
			}
			num += 100
		}
		c := p.Pick(v)
		if c == nil {
			continue
		}
		if c.OutputLevel <= c.Level && !(c.Level == 0 && c.OutputLevel > 0) {
			t.Fatalf("compaction from L%d to L%d", c.Level, c.OutputLevel)
		}
		base, _ := Targets(v, o)
		for l := 1; l < base; l++ {
			if len(v.Levels[l]) > 0 {
				t.Fatalf("base level %d is below data at L%d", base, l)
			}
		}
		// Every output-level table overlapping the inputs is an input.
		lo, hi := keyRange(c.Inputs[0])
		if got, want := len(c.Inputs[1]), len(overlapping(v.Levels[c.OutputLevel], lo, hi)); got != want {
			t.Fatalf("%d output-level inputs, %d overlap", got, want)
		}
	}
}

// TestReasonString pins the reasons' names, which metrics and logs print.
func TestReasonString(t *testing.T) {
	for r, want := range map[Reason]string{ReasonScore: "score", ReasonPurge: "purge", ReasonAge: "age", ReasonIdle: "idle", ReasonManual: "manual", NumReasons: "Reason(5)", -1: "Reason(-1)"} {
		if got := r.String(); got != want {
			t.Errorf("Reason %d: %q, want %q", int(r), got, want)
		}
	}
}
