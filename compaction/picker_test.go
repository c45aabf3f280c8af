package compaction

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func table(num uint64, size uint64, lo, hi string) Table {
	return Table{FileNum: num, Size: size, Smallest: []byte(lo), Largest: []byte(hi)}
}

// sortedLevel makes n adjacent non-overlapping tables of size bytes each.
func sortedLevel(first uint64, n int, size uint64) []Table {
	var ts []Table
	for i := 0; i < n; i++ {
		ts = append(ts, table(first+uint64(i), size, fmt.Sprintf("k%06d", i*10), fmt.Sprintf("k%06d", i*10+9)))
	}
	return ts
}

func TestTargetsPutNinetyPercentAtTheBottom(t *testing.T) {
	o := DefaultOptions()
	o.BaseBytes = 1 << 20
	for _, total := range []uint64{1 << 20, 50 << 20, 1 << 30, 200 << 30} {
		v := &Version{}
		v.Levels[6] = sortedLevel(1, 100, total/100)
		base, maxBytes := Targets(v, o)
		if base < 1 || base > 6 {
			t.Fatalf("total %d: base level %d", total, base)
		}
		if maxBytes[base] < o.BaseBytes {
			t.Fatalf("total %d: base target %d below BaseBytes", total, maxBytes[base])
		}
		// The levels between base and bottom hold about 1/mult of the
		// data together when every level is full (P1).
		var above uint64
		for l := base; l < 6; l++ {
			above += maxBytes[l]
		}
		if base < 6 && float64(above) > 0.2*float64(total) {
			t.Fatalf("total %d: upper levels' targets %d exceed 20%% of the data (base L%d, %v)", total, above, base, maxBytes)
		}
	}
	// An empty tree compacts L0 straight to the bottom.
	if base, _ := Targets(&Version{}, o); base != 6 {
		t.Fatalf("empty tree: base level %d, want 6", base)
	}
	// Data at L3 pins the base level at or above L3.
	v := &Version{}
	v.Levels[3] = sortedLevel(1, 2, 1<<20)
	if base, _ := Targets(v, o); base > 3 {
		t.Fatalf("base level %d skips data at L3", base)
	}
}

func TestPickL0ByCountAndWithOverlaps(t *testing.T) {
	p := &Picker{Opts: DefaultOptions()}
	v := &Version{}
	v.Levels[6] = sortedLevel(100, 10, 1<<20)
	for i := 0; i < 3; i++ {
		v.Levels[0] = append(v.Levels[0], table(uint64(i+1), 1<<20, "k000015", "k000035"))
	}
	if c := p.Pick(v); c != nil {
		t.Fatalf("3 L0 tables (trigger 4) picked %+v", c)
	}
	v.Levels[0] = append(v.Levels[0], table(4, 1<<20, "k000000", "k000012"))
	c := p.Pick(v)
	if c == nil || c.Level != 0 || len(c.Inputs[0]) != 4 {
		t.Fatalf("4 L0 tables: picked %+v", c)
	}
	if c.OutputLevel != 6 {
		t.Fatalf("output level %d, want the base level 6", c.OutputLevel)
	}
	// k000000..k000035 meets the first four L6 tables.
	if len(c.Inputs[1]) != 4 {
		t.Fatalf("%d overlapping L6 inputs, want 4", len(c.Inputs[1]))
	}
}

func TestPickLevelRoundRobinAndTrivialMove(t *testing.T) {
	o := DefaultOptions()
	o.BaseBytes = 1 << 20
	p := &Picker{Opts: o}
	v := &Version{}
	v.Levels[5] = sortedLevel(1, 8, 1<<20) // 8 MiB against a ~1 MiB target
	v.Levels[6] = []Table{table(100, 50<<20, "k000035", "k000036")}
	var seen []uint64
	for i := 0; i < 8; i++ {
		c := p.Pick(v)
		if c == nil || c.Level != 5 || len(c.Inputs[0]) != 1 {
			t.Fatalf("pick %d: %+v", i, c)
		}
		in := c.Inputs[0][0]
		seen = append(seen, in.FileNum)
		wantMove := in.FileNum != 4 // table 4 (k000030..k000039) overlaps L6
		if c.TrivialMove != wantMove {
			t.Fatalf("table %d: trivial move %v, want %v", in.FileNum, c.TrivialMove, wantMove)
		}
		p.Done(c)
	}
	for i, n := range seen {
		if n != uint64(i+1) {
			t.Fatalf("picks %v are not round-robin over the level", seen)
		}
	}
}

func TestPickPrefersHighestScore(t *testing.T) {
	o := DefaultOptions()
	o.BaseBytes = 1 << 20
	p := &Picker{Opts: o}
	v := &Version{}
	v.Levels[6] = sortedLevel(1000, 10, 100<<20)
	v.Levels[0] = sortedLevel(1, 5, 1<<10) // score 5/4
	v.Levels[5] = sortedLevel(100, 10, 30<<20)
	scores := p.Scores(v)
	c := p.Pick(v)
	want := 0
	if scores[5] > scores[0] {
		want = 5
	}
	if c == nil || c.Level != want {
		t.Fatalf("scores %v: picked level %d, want %d", scores, c.Level, want)
	}
}

func TestSplitterCutsAtTargetAndGrandparentOverlap(t *testing.T) {
	c := &Compaction{Grandparents: sortedLevel(1, 100, 1<<20)}
	s := NewSplitter(c, Options{TargetFileSize: 1 << 30, MaxGrandparentOverlap: 5 << 20})
	splits := 0
	for i := 0; i < 1000; i++ {
		if s.ShouldSplit([]byte(fmt.Sprintf("k%06d", i)), 100) {
			splits++
		}
	}
	// 1000 keys span 100 grandparents of 1 MiB: a split every ~6 of them.
	if splits < 10 || splits > 20 {
		t.Fatalf("%d splits across 100 MiB of grandparents with a 5 MiB limit", splits)
	}
	s = NewSplitter(&Compaction{}, Options{TargetFileSize: 1000})
	if s.ShouldSplit([]byte("a"), 999) || !s.ShouldSplit([]byte("b"), 1000) {
		t.Fatal("target size split is off")
	}
}

func TestPickerOnRandomShapesStaysConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 500; trial++ {
		o := DefaultOptions()
		o.BaseBytes = 1 << 20
		p := &Picker{Opts: o}
		v := &Version{}
		num := uint64(1)
		for l := 0; l < NumLevels; l++ {
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

func TestPickL0MovesNonOverlappingTablesTrivially(t *testing.T) {
	p := &Picker{Opts: DefaultOptions()}
	v := &Version{}
	// A sequential load: four L0 tables in disjoint ranges, nothing below.
	for i := 0; i < 4; i++ {
		v.Levels[0] = append(v.Levels[0], table(uint64(i+1), 1<<20, fmt.Sprintf("k%06d", i*10), fmt.Sprintf("k%06d", i*10+9)))
	}
	if c := p.Pick(v); c == nil || !c.TrivialMove || len(c.Inputs[0]) != 4 {
		t.Fatalf("disjoint L0 tables: %+v", c)
	}
	// Two overlapping L0 tables must be merged.
	v.Levels[0][1].Smallest = []byte("k000005")
	if c := p.Pick(v); c == nil || c.TrivialMove {
		t.Fatalf("overlapping L0 tables moved trivially: %+v", c)
	}
	// Disjoint again, but the base level overlaps: merge.
	v.Levels[0][1].Smallest = []byte("k000010")
	v.Levels[6] = []Table{table(100, 1<<20, "k000015", "k000016")}
	if c := p.Pick(v); c == nil || c.TrivialMove {
		t.Fatalf("L0 tables overlapping the base level moved trivially: %+v", c)
	}
}
