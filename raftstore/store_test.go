package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
)

// storeHarness opens a Store in a test directory and reopens it between the
// steps of a case, so every assertion also holds after a restart.
type storeHarness struct {
	t   *testing.T
	dir string
	s   *Store
}

func newHarness(t *testing.T) *storeHarness {
	t.Helper()
	h := &storeHarness{t: t, dir: t.TempDir()}
	h.open()
	t.Cleanup(func() {
		if h.s != nil {
			h.s.Close()
		}
	})
	return h
}

func (h *storeHarness) open() {
	h.t.Helper()
	s, err := Open(h.dir, nil)
	if err != nil {
		h.t.Fatalf("Open: %v", err)
	}
	h.s = s
}

func (h *storeHarness) reopen() {
	h.t.Helper()
	if err := h.s.Close(); err != nil {
		h.t.Fatalf("Close: %v", err)
	}
	h.s = nil
	h.open()
}

// bounds checks FirstIndex and LastIndex now and after a reopen.
func (h *storeHarness) bounds(first, last uint64) {
	h.t.Helper()
	for round := 0; round < 2; round++ {
		f, err := h.s.FirstIndex()
		if err != nil || f != first {
			h.t.Fatalf("round %d: FirstIndex = %d, %v; want %d", round, f, err, first)
		}
		l, err := h.s.LastIndex()
		if err != nil || l != last {
			h.t.Fatalf("round %d: LastIndex = %d, %v; want %d", round, l, err, last)
		}
		if round == 0 {
			h.reopen()
		}
	}
}

func (h *storeHarness) storeRange(lo, hi uint64) {
	h.t.Helper()
	var logs []*raft.Log
	for i := lo; i <= hi; i++ {
		logs = append(logs, testLog(i))
	}
	if err := h.s.StoreLogs(logs); err != nil {
		h.t.Fatalf("StoreLogs %d-%d: %v", lo, hi, err)
	}
}

func (h *storeHarness) deleteRange(lo, hi uint64) {
	h.t.Helper()
	if err := h.s.DeleteRange(lo, hi); err != nil {
		h.t.Fatalf("DeleteRange %d-%d: %v", lo, hi, err)
	}
}

// present checks that index holds testLog(index), or is absent.
func (h *storeHarness) present(index uint64, want bool) {
	h.t.Helper()
	var got raft.Log
	err := h.s.GetLog(index, &got)
	switch {
	case !want && !errors.Is(err, raft.ErrLogNotFound):
		h.t.Fatalf("GetLog(%d) = %v; want raft.ErrLogNotFound", index, err)
	case want && err != nil:
		h.t.Fatalf("GetLog(%d): %v", index, err)
	case want:
		sameLog(h.t, &got, testLog(index))
	}
}

// testLog is a deterministic entry for index, with every field set.
func testLog(index uint64) *raft.Log {
	return &raft.Log{
		Index:      index,
		Term:       index/7 + 1,
		Type:       raft.LogType(index % 6),
		Data:       []byte(fmt.Sprintf("data-%d", index)),
		Extensions: []byte(fmt.Sprintf("ext-%d", index%3)),
		AppendedAt: time.Unix(1_700_000_000+int64(index), int64(index%1e9)),
	}
}

func sameLog(t *testing.T, got, want *raft.Log) {
	t.Helper()
	if got.Index != want.Index || got.Term != want.Term || got.Type != want.Type ||
		!bytes.Equal(got.Data, want.Data) || !bytes.Equal(got.Extensions, want.Extensions) ||
		!got.AppendedAt.Equal(want.AppendedAt) {
		t.Fatalf("log round trip:\n got %+v\nwant %+v", got, want)
	}
}

func TestEmptyStore(t *testing.T) {
	h := newHarness(t)
	h.bounds(0, 0)
	h.present(1, false)
	h.present(0, false)
	if _, err := h.s.Get([]byte("CurrentTerm")); err == nil || err.Error() != "not found" || !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing key = %v; want the text \"not found\"", err)
	}
	if _, err := h.s.GetUint64([]byte("CurrentTerm")); err == nil || err.Error() != "not found" {
		t.Fatalf("GetUint64 of a missing key = %v; want the text \"not found\"", err)
	}
	h.deleteRange(1, 100) // deleting from an empty log is not an error
	h.bounds(0, 0)
}

func TestLogEveryFieldRoundTrips(t *testing.T) {
	h := newHarness(t)
	loc := time.FixedZone("UTC+5:30", 5*3600+1800)
	logs := []*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("config")},
		{Index: 2, Term: 1 << 40, Type: raft.LogCommand, Data: bytes.Repeat([]byte{0xff}, 70_000),
			Extensions: []byte("middleware"), AppendedAt: time.Date(2026, 12, 1, 10, 0, 0, 123456789, loc)},
		{Index: 3, Term: 2, Type: raft.LogNoop}, // nil Data, zero AppendedAt
		{Index: 4, Term: ^uint64(0), Type: raft.LogType(200), Data: []byte{}, // a type raft may add later
			AppendedAt: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)}, // one nanosecond after the zero time
		{Index: 5, Term: 3, Type: raft.LogBarrier, AppendedAt: time.Unix(-5, 999_999_999)},
	}
	if err := h.s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	for _, want := range logs {
		var got raft.Log
		if err := h.s.GetLog(want.Index, &got); err != nil {
			t.Fatalf("GetLog(%d): %v", want.Index, err)
		}
		sameLog(t, &got, want)
		if want.AppendedAt.IsZero() != got.AppendedAt.IsZero() {
			t.Fatalf("index %d: zero AppendedAt did not round-trip", want.Index)
		}
	}
	h.bounds(1, 5)
}

func TestStoreLogBoundsAndTruncation(t *testing.T) {
	h := newHarness(t)
	if err := h.s.StoreLog(testLog(1)); err != nil {
		t.Fatal(err)
	}
	h.bounds(1, 1)

	// Each step stores or deletes [lo, hi], then checks both bounds (and
	// again after a reopen) and the indexes it names as present or absent.
	steps := []struct {
		store       bool // StoreLogs of [lo, hi]; else DeleteRange
		lo, hi      uint64
		first, last uint64
		in, out     []uint64
	}{
		{store: true, lo: 2, hi: 20, first: 1, last: 20},
		// Prefix compaction after a snapshot.
		{lo: 1, hi: 5, first: 6, last: 20, in: []uint64{6}, out: []uint64{5}},
		// Tail truncation on a conflict, then the leader's entries replace it.
		{lo: 15, hi: 20, first: 6, last: 14, out: []uint64{15}},
		{store: true, lo: 15, hi: 17, first: 6, last: 17, in: []uint64{17}, out: []uint64{18}},
		// A range past either end changes nothing; one covering both empties it.
		{lo: 100, hi: 200, first: 6, last: 17},
		{lo: 0, hi: 2, first: 6, last: 17},
		{lo: 0, hi: ^uint64(0), first: 0, last: 0, out: []uint64{10}},
		// A log restarted after a snapshot restore begins past the old end.
		{store: true, lo: 1000, hi: 1002, first: 1000, last: 1002},
	}
	for n, st := range steps {
		t.Logf("step %d: store %v [%d, %d]", n, st.store, st.lo, st.hi) // shown if the step fails
		if st.store {
			h.storeRange(st.lo, st.hi)
		} else {
			h.deleteRange(st.lo, st.hi)
		}
		h.bounds(st.first, st.last)
		for _, i := range st.in {
			h.present(i, true)
		}
		for _, i := range st.out {
			h.present(i, false)
		}
	}
}

// TestIndexZeroIsAnEntry: raft starts at index 1, but raft's own StoreLog
// benchmark writes index 0 first; the bounds must not take it for "empty".
func TestIndexZeroIsAnEntry(t *testing.T) {
	h := newHarness(t)
	h.storeRange(0, 0)
	h.bounds(0, 0)
	h.present(0, true)
	h.storeRange(1, 2)
	h.bounds(0, 2)
	h.deleteRange(1, 2)
	h.bounds(0, 0)
	h.present(0, true)
	h.storeRange(5, 5)
	h.bounds(0, 5)
	h.deleteRange(0, 0)
	h.bounds(5, 5)
}

func TestGapsKeepBounds(t *testing.T) {
	h := newHarness(t)
	for _, r := range [][2]uint64{{1, 3}, {10, 12}, {20, 20}} {
		h.storeRange(r[0], r[1])
	}
	h.bounds(1, 20)
	h.deleteRange(1, 9) // first moves to the next entry past the gap
	h.bounds(10, 20)
	h.deleteRange(13, 25) // last moves back across the gap
	h.bounds(10, 12)
	h.deleteRange(11, 11) // a hole leaves both bounds
	h.bounds(10, 12)
	h.present(11, false)
	h.present(12, true)
}

// TestIndexOrderIsKeyOrder checks the bounds at the byte boundaries of the
// big-endian index, where a little-endian or varint key would misorder.
func TestIndexOrderIsKeyOrder(t *testing.T) {
	h := newHarness(t)
	idx := []uint64{1 << 32, 255, 256, 65535, 65536, 1, ^uint64(0), 1<<56 - 1, 1 << 56}
	for _, i := range idx {
		if err := h.s.StoreLog(testLog(i)); err != nil {
			t.Fatal(err)
		}
	}
	h.bounds(1, ^uint64(0))
	h.deleteRange(1, 65535)
	h.bounds(65536, ^uint64(0))
	h.deleteRange(1<<56, ^uint64(0))
	h.bounds(65536, 1<<56-1)
	for _, i := range idx {
		h.present(i, i >= 65536 && i < 1<<56)
	}
}

// TestStoreMatchesModel runs random StoreLogs and DeleteRange calls against
// a map, reopening at random, and checks every index and both bounds.
func TestStoreMatchesModel(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(21, 1))
	model := map[uint64]bool{}
	const span = 300
	for step := 0; step < 150; step++ {
		switch op := rng.IntN(10); {
		case op < 6:
			var logs []*raft.Log
			for n := rng.IntN(8) + 1; n > 0; n-- {
				i := rng.Uint64N(span) + 1
				logs = append(logs, testLog(i))
				model[i] = true
			}
			if err := h.s.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
		case op < 9:
			lo := rng.Uint64N(span + 10)
			hi := lo + rng.Uint64N(40)
			h.deleteRange(lo, hi)
			for i := lo; i <= hi; i++ {
				delete(model, i)
			}
		default:
			h.reopen()
		}
		var first, last uint64
		for i := range model {
			if first == 0 || i < first {
				first = i
			}
			last = max(last, i)
		}
		if f, _ := h.s.FirstIndex(); f != first {
			t.Fatalf("step %d: FirstIndex = %d; model %d", step, f, first)
		}
		if l, _ := h.s.LastIndex(); l != last {
			t.Fatalf("step %d: LastIndex = %d; model %d", step, l, last)
		}
	}
	h.reopen()
	for i := uint64(0); i <= span+50; i++ {
		h.present(i, model[i])
	}
}

func TestStableStore(t *testing.T) {
	h := newHarness(t)
	if err := h.s.Set([]byte("LastVoteCand"), []byte("node-2")); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Set([]byte("empty"), nil); err != nil {
		t.Fatal(err)
	}
	if err := h.s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := h.s.SetUint64([]byte("CurrentTerm"), 1<<63+5); err != nil {
		t.Fatal(err)
	}
	// A stable key that looks like a log key stays in the stable range.
	if err := h.s.Set(logKey(3), []byte("not a log")); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	if v, err := h.s.Get([]byte("LastVoteCand")); err != nil || string(v) != "node-2" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if v, err := h.s.Get([]byte("empty")); err != nil || len(v) != 0 {
		t.Fatalf("Get of an empty value = %q, %v", v, err)
	}
	if v, err := h.s.GetUint64([]byte("CurrentTerm")); err != nil || v != 1<<63+5 {
		t.Fatalf("GetUint64 = %d, %v", v, err)
	}
	h.bounds(0, 0)
	h.present(3, false)
	if _, err := h.s.GetUint64([]byte("LastVoteCand")); !errors.Is(err, kv.ErrCorruption) {
		t.Fatalf("GetUint64 of a 6-byte value = %v; want kv.ErrCorruption", err)
	}
}

func TestCorruptEntryIsAnError(t *testing.T) {
	h := newHarness(t)
	h.storeRange(1, 2)
	if err := h.s.db.Set(logKey(2), []byte{logFormatV1, 0, 1, appendedAtZero, 9, 'x'}, kv.Sync); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	if err := h.s.GetLog(2, &l); !errors.Is(err, kv.ErrCorruption) {
		t.Fatalf("GetLog of a truncated value = %v; want kv.ErrCorruption", err)
	}
	// A key in the log range that is not an index key fails Open.
	if err := h.s.db.Set([]byte{logPrefix, 1}, []byte("x"), kv.Sync); err != nil {
		t.Fatal(err)
	}
	h.s.Close()
	h.s = nil
	if s, err := Open(h.dir, nil); !errors.Is(err, kv.ErrCorruption) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open with a malformed log key = %v; want kv.ErrCorruption", err)
	}
}

// TestDeleteRangeReclaimsSpace checks that deleting the log prefix, as raft
// does after a snapshot, gives the tables' space back.
func TestDeleteRangeReclaimsSpace(t *testing.T) {
	h := newHarness(t)
	const n = reclaimDeletedEntries + 500
	rng := rand.New(rand.NewPCG(4, 2))
	for lo := uint64(1); lo <= n; lo += 500 {
		var logs []*raft.Log
		for i := lo; i < lo+500 && i <= n; i++ {
			value := make([]byte, 1024) // random, so snappy cannot shrink it
			for j := range value {
				value[j] = byte(rng.Uint32())
			}
			logs = append(logs, &raft.Log{Index: i, Term: 1, Data: value})
		}
		if err := h.s.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	before := tableBytes(t, h.s.db)
	h.deleteRange(1, n-10)
	h.s.reclaim.wait()
	after := tableBytes(t, h.s.db)
	if before < n*1024/2 || after > before/20 {
		t.Fatalf("tables hold %d bytes before deleting %d of %d entries and %d after; want under 5%%", before, n-10, n, after)
	}
	h.bounds(n-9, n)
	var l raft.Log
	if err := h.s.GetLog(n-9, &l); err != nil || len(l.Data) != 1024 {
		t.Fatalf("GetLog(%d) after the deletion = %v", n-9, err)
	}
	h.present(n-10, false)
}

func tableBytes(t *testing.T, db *kv.DB) uint64 {
	t.Helper()
	tables, err := db.Tables()
	if err != nil {
		t.Fatal(err)
	}
	var total uint64
	for _, ti := range tables {
		total += ti.Size
	}
	return total
}
