package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// bothStores is what raft asks of a store: its log and its stable state.
type bothStores interface {
	raft.LogStore
	raft.StableStore
}

// TestSameAnswersAsBoltStore runs one random sequence of log and stable
// store calls (overlapping and out-of-order StoreLogs, DeleteRange over
// gaps, reversed, past both ends and over the whole index space, reads of
// missing indexes and keys, index 0) on a Store and on raft-boltdb v2, the
// store raft users replace with it, and requires the same answer to every
// call: the same bounds, the same entry or raft.ErrLogNotFound, the same
// value or an error with the text "not found" (R5). Where the two differ
// on purpose (an empty stable value comes back empty but not nil; a nil
// key is a key; GetUint64 of a value not 8 bytes long is an error, not
// raft-boltdb's panic) the sequence does not go.
func TestSameAnswersAsBoltStore(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bolt, err := raftboltdb.NewBoltStore(filepath.Join(t.TempDir(), "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer bolt.Close()
	stores := [2]bothStores{s, bolt}
	same := func(step int, what string, call func(bothStores) string) {
		t.Helper()
		if got, want := call(stores[0]), call(stores[1]); got != want {
			t.Fatalf("step %d, %s:\n sievekv %s\n boltdb  %s", step, what, got, want)
		}
	}
	errText := func(err error) string {
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, raft.ErrLogNotFound):
			return "log not found"
		}
		return "error " + err.Error()
	}
	bounds := func(st bothStores) string {
		f, ferr := st.FirstIndex()
		l, lerr := st.LastIndex()
		return fmt.Sprintf("first %d %s, last %d %s", f, errText(ferr), l, errText(lerr))
	}
	rng := rand.New(rand.NewPCG(5, 9))
	const span = 120
	for step := 0; step < 500; step++ {
		switch op := rng.IntN(20); {
		case op < 8:
			var logs []*raft.Log
			for n := rng.IntN(6) + 1; n > 0; n-- {
				i := rng.Uint64N(span)
				if rng.IntN(3) > 0 && len(logs) > 0 {
					i = logs[len(logs)-1].Index + 1 // mostly runs, as raft writes
				}
				logs = append(logs, &raft.Log{Index: i, Term: rng.Uint64N(4) + 1, Type: raft.LogType(rng.IntN(6)), Data: fmt.Appendf(nil, "step %d", step)})
			}
			same(step, fmt.Sprintf("StoreLogs of %d", len(logs)), func(st bothStores) string { return errText(st.StoreLogs(logs)) })
		case op < 12:
			lo := rng.Uint64N(span + 10)
			hi := lo + rng.Uint64N(30)
			switch rng.IntN(6) {
			case 0:
				lo, hi = hi+1, lo // reversed
			case 1:
				lo, hi = 0, ^uint64(0)
			}
			same(step, fmt.Sprintf("DeleteRange(%d, %d)", lo, hi), func(st bothStores) string { return errText(st.DeleteRange(lo, hi)) })
		case op < 16:
			i := rng.Uint64N(span + 10)
			same(step, fmt.Sprintf("GetLog(%d)", i), func(st bothStores) string {
				var l raft.Log
				err := st.GetLog(i, &l)
				return fmt.Sprintf("%s %d %d %d %q", errText(err), l.Index, l.Term, l.Type, l.Data)
			})
		case op < 18:
			// Set and SetUint64 keep to their own keys: GetUint64 of a
			// value not 8 bytes long is ErrCorruption here and a panic in
			// raft-boltdb.
			if i := rng.IntN(4); rng.IntN(2) == 0 {
				key, val := fmt.Appendf(nil, "key-%d", i), bytes.Repeat([]byte{byte(step)}, rng.IntN(9)+1)
				same(step, fmt.Sprintf("Set(%s)", key), func(st bothStores) string { return errText(st.Set(key, val)) })
			} else {
				key, u := fmt.Appendf(nil, "uint-%d", i), rng.Uint64()
				same(step, fmt.Sprintf("SetUint64(%s)", key), func(st bothStores) string { return errText(st.SetUint64(key, u)) })
			}
		default:
			i := rng.IntN(6)
			key, ukey := fmt.Appendf(nil, "key-%d", i), fmt.Appendf(nil, "uint-%d", i)
			same(step, fmt.Sprintf("Get(%s)", key), func(st bothStores) string {
				v, err := st.Get(key)
				return fmt.Sprintf("%x %s", v, errText(err))
			})
			same(step, fmt.Sprintf("GetUint64(%s)", ukey), func(st bothStores) string {
				v, err := st.GetUint64(ukey)
				return fmt.Sprintf("%d %s", v, errText(err))
			})
		}
		same(step, "bounds", bounds)
	}
}
