package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// Key prefixes of the state machine's DB. Do not renumber: on disk and in
// snapshot streams.
const (
	userPrefix   byte = 'u' // user key -> value
	memberPrefix byte = 'h' // server ID -> HTTP address
	// freshJoinPrefix: server ID -> raft address of a server whose state
	// is older than cluster IDs and whose fresh join this cluster took
	// (opFreshJoin, S13).
	freshJoinPrefix byte = 'f'
)

// clusterKey holds the cluster's ID (S13) and the index of the entry that
// named it (clusterRecord); it is a record of snapshot streams, so an
// installed snapshot brings it.
var clusterKey = []byte{'c'}

// appliedKey holds the index of the last command applied (S2); it is not a
// user or member key, so snapshot streams leave it out.
var appliedKey = []byte{'a'}

// stateDirFS makes the state directory and its entries durable: a
// directory created or renamed into is synced through it. Tests wrap it
// to see the syncs.
var stateDirFS vfs.FS = vfs.Default

// stateMachine is the raft FSM: a sievekv DB under dir/<generation>, the
// generation named by dir/CURRENT. Restore builds a new generation and
// switches CURRENT, so a crash mid-restore leaves the old state whole.
type stateMachine struct {
	dir string

	// mu guards db, gen and pins. Apply, Snapshot and Restore run on
	// raft's FSM goroutine, one at a time; readers hold mu shared for one
	// read so Restore, holding it exclusively, never closes a DB under
	// them.
	mu  sync.RWMutex
	db  *kv.DB
	gen uint64
	// pins counts, per DB, the snapshots not yet released. Restore must
	// not wait for them (S5): it swaps in the new DB at once, and a DB it
	// replaced while pinned is closed and removed by its last Release.
	pins map[*kv.DB]*pin

	applied atomic.Uint64 // index of the last command applied (S2)
	dbOpts  *kv.Options
	// cluster is the record at clusterKey, zero until the state holds one
	// (S13). The raft transport's handshake reads it on its goroutines.
	cluster atomic.Pointer[clusterRecord]
	// onNamed, if set, is called (on raft's FSM goroutine) once the state
	// comes to hold a cluster ID it did not hold: the raft handshake then
	// closes the connections it could not check (clusterStreamLayer).
	onNamed func()

	// failed is the first write failure of the DB (owned by the FSM
	// goroutine; read by status through failure). After it the state is
	// behind the log, so no later command is applied and no snapshot is
	// taken (S6): a restart replays them from the raft log (S2), and a
	// Restore, which replaces the state whole, clears it.
	failed atomic.Pointer[error]
}

// failure is the sticky apply error, or nil.
func (sm *stateMachine) failure() error {
	if p := sm.failed.Load(); p != nil {
		return *p
	}
	return nil
}

const currentFile = "CURRENT"

// openStateMachine opens the generation CURRENT names (creating the first
// one in an empty dir) and removes any other, the leftovers of a restore
// that did not finish.
func openStateMachine(dir string, opts *kv.Options) (*stateMachine, error) {
	// A new state directory is an entry of the node's directory: without
	// syncing that, a power loss could forget the directory and with it
	// every generation and CURRENT, whatever they synced themselves.
	if err := vfs.MkdirAllDurable(stateDirFS, dir, 0o755); err != nil {
		return nil, fmt.Errorf("kvserver: state dir: %w", err)
	}
	sm := &stateMachine{dir: dir, dbOpts: opts, gen: 1, pins: map[*kv.DB]*pin{}}
	switch b, err := os.ReadFile(filepath.Join(dir, currentFile)); {
	case errors.Is(err, os.ErrNotExist):
		if err := sm.setCurrent(1); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("kvserver: read %s: %w", currentFile, err)
	default:
		gen, perr := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if perr != nil || gen == 0 {
			return nil, fmt.Errorf("kvserver: %s: %w: %q names no generation", filepath.Join(dir, currentFile), ErrBadCommand, b)
		}
		sm.gen = gen
	}
	if err := sm.removeOtherGenerations(); err != nil {
		return nil, err
	}
	db, err := kv.Open(sm.genDir(sm.gen), opts)
	if err != nil {
		return nil, fmt.Errorf("kvserver: open state: %w", err)
	}
	sm.db = db
	applied, err := readApplied(db)
	if err != nil {
		db.Close()
		return nil, err
	}
	sm.applied.Store(applied)
	cluster, err := readClusterRecord(db)
	if err != nil {
		db.Close()
		return nil, err
	}
	sm.cluster.Store(&cluster)
	return sm, nil
}

// readClusterRecord is the cluster record db holds (S13), zero if none.
func readClusterRecord(db *kv.DB) (clusterRecord, error) {
	v, err := db.Get(clusterKey)
	if errors.Is(err, kv.ErrNotFound) {
		return clusterRecord{}, nil
	}
	if err != nil {
		return clusterRecord{}, fmt.Errorf("kvserver: read cluster ID: %w", err)
	}
	r, err := clusterRecordFrom(v)
	if err != nil {
		return clusterRecord{}, fmt.Errorf("kvserver: %w: stored %w", kv.ErrCorruption, err)
	}
	return r, nil
}

// clusterID is the ID of the cluster whose state this is (S13), zero when
// the state has none yet.
func (sm *stateMachine) clusterID() clusterID { return sm.cluster.Load().id }

// clusterRecord is the ID with the index of the entry that named it.
func (sm *stateMachine) clusterRecord() clusterRecord { return *sm.cluster.Load() }

// named records that the state now holds r, and tells onNamed if it held
// no ID before.
func (sm *stateMachine) named(r clusterRecord) {
	was := sm.cluster.Swap(&r)
	if !was.id.known() && r.id.known() && sm.onNamed != nil {
		sm.onNamed()
	}
}

func (sm *stateMachine) genDir(gen uint64) string {
	return filepath.Join(sm.dir, fmt.Sprintf("%06d", gen))
}

// setCurrent makes gen the live generation: write, sync, rename, sync dir.
func (sm *stateMachine) setCurrent(gen uint64) error {
	tmp := filepath.Join(sm.dir, currentFile+".tmp")
	f, err := os.Create(tmp)
	if err == nil {
		_, err = fmt.Fprintf(f, "%d\n", gen)
		if serr := f.Sync(); err == nil {
			err = serr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(sm.dir, currentFile))
	}
	if err == nil {
		err = vfs.SyncDir(stateDirFS, sm.dir)
	}
	if err != nil {
		return fmt.Errorf("kvserver: switch state to generation %d: %w", gen, err)
	}
	return nil
}

func (sm *stateMachine) removeOtherGenerations() error {
	entries, err := os.ReadDir(sm.dir)
	if err != nil {
		return fmt.Errorf("kvserver: list state dir: %w", err)
	}
	for _, e := range entries {
		if gen, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && e.IsDir() && gen != sm.gen {
			if err := os.RemoveAll(filepath.Join(sm.dir, e.Name())); err != nil {
				return fmt.Errorf("kvserver: remove stale state generation: %w", err)
			}
		}
	}
	return nil
}

func readApplied(db *kv.DB) (uint64, error) {
	v, err := db.Get(appliedKey)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("kvserver: read applied index: %w", err)
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("kvserver: %w: applied index of %d bytes", kv.ErrCorruption, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Apply applies one committed command. A command at or below the applied
// index is already in the DB (raft replays the log past its last snapshot
// at start, S2) and is skipped. The write need not sync: the raft log holds
// the command durably, and Snapshot syncs before raft may drop it.
func (sm *stateMachine) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand || l.Index <= sm.applied.Load() {
		return nil
	}
	if err := sm.failure(); err != nil {
		return err
	}
	c, err := decodeCommand(l.Data)
	if err != nil {
		// Only a kvserver writes commands; skip the entry rather than stop
		// the node, and report it to the caller that proposed it.
		sm.applied.Store(l.Index)
		return fmt.Errorf("kvserver: log entry %d: %w", l.Index, err)
	}
	b := sm.db.NewBatch()
	var named *clusterRecord
	switch c.op {
	case opSet:
		b.Set(prefixed(userPrefix, c.key), c.value)
	case opDelete:
		b.Delete(prefixed(userPrefix, c.key))
	case opMember:
		b.Set(prefixed(memberPrefix, c.key), c.value)
		b.Delete(prefixed(freshJoinPrefix, c.key))
	case opFreshJoin:
		b.Set(prefixed(freshJoinPrefix, c.key), c.value)
	case opFreshJoinEnd:
		b.Delete(prefixed(freshJoinPrefix, c.key))
	case opCluster:
		// The first committed wins: two leaders in a row may each have
		// proposed one before applying the other's.
		if !sm.clusterID().known() {
			id, _ := clusterIDFrom(c.value) // checked by decodeCommand
			named = &clusterRecord{id: id, index: l.Index}
			b.Set(clusterKey, named.encode())
		}
	}
	b.Set(appliedKey, binary.BigEndian.AppendUint64(nil, l.Index))
	if err := sm.db.Apply(b, kv.NoSync); err != nil {
		err = fmt.Errorf("kvserver: apply log entry %d: %w", l.Index, err)
		sm.failed.CompareAndSwap(nil, &err)
		return err
	}
	sm.applied.Store(l.Index)
	if named != nil {
		sm.named(*named)
	}
	return nil
}

func prefixed(p byte, key []byte) []byte {
	k := make([]byte, 0, 1+len(key))
	return append(append(k, p), key...)
}

// get reads a user key from the local state (no consensus).
func (sm *stateMachine) get(key []byte) ([]byte, error) {
	sm.mu.RLock()
	defer sm.mu.RUnlock()
	return sm.db.Get(prefixed(userPrefix, key))
}

// memberHTTP is the HTTP address a member registered, "" if none.
func (sm *stateMachine) memberHTTP(id string) string { return sm.serverRecord(memberPrefix, id) }

// freshJoined is the raft address recorded for server id by opFreshJoin,
// "" if none: the server's state is older than cluster IDs, and this
// cluster took its fresh join, which removed it from the configuration.
func (sm *stateMachine) freshJoined(id string) string { return sm.serverRecord(freshJoinPrefix, id) }

// freshJoinedIDs lists the servers with a fresh-join record.
func (sm *stateMachine) freshJoinedIDs() ([]string, error) {
	sm.mu.RLock()
	defer sm.mu.RUnlock()
	it := sm.db.NewIter(&kv.IterOptions{LowerBound: []byte{freshJoinPrefix}, UpperBound: []byte{freshJoinPrefix + 1}})
	var ids []string
	for ok := it.First(); ok; ok = it.Next() {
		ids = append(ids, string(it.Key()[1:]))
	}
	return ids, it.Close()
}

// serverRecord is the value of server id's key under prefix p, "" if none
// (or unreadable: callers treat both as no record).
func (sm *stateMachine) serverRecord(p byte, id string) string {
	sm.mu.RLock()
	defer sm.mu.RUnlock()
	v, err := sm.db.Get(prefixed(p, []byte(id)))
	if err != nil {
		return ""
	}
	return string(v)
}

// Snapshot syncs the DB, so every command up to the applied index is
// durable before raft may compact them out of its log (S2), and pins a
// sievekv snapshot for Persist to stream.
func (sm *stateMachine) Snapshot() (raft.FSMSnapshot, error) {
	if err := sm.failure(); err != nil {
		// raft would label the snapshot with its own applied index and
		// compact the log below it: the commands skipped since the
		// failure would be gone from the log and missing from the state
		// it streams to every follower it installs.
		return nil, fmt.Errorf("kvserver: no snapshot of a state behind the log: %w", err)
	}
	applied := sm.applied.Load()
	if err := sm.db.Set(appliedKey, binary.BigEndian.AppendUint64(nil, applied), kv.Sync); err != nil {
		return nil, fmt.Errorf("kvserver: sync state for snapshot: %w", err)
	}
	sm.mu.Lock()
	defer sm.mu.Unlock()
	p := sm.pins[sm.db]
	if p == nil {
		p = &pin{}
		sm.pins[sm.db] = p
	}
	p.snapshots++
	return &fsmSnapshot{sm: sm, db: sm.db, snap: sm.db.NewSnapshot(), applied: applied}, nil
}

// pin is the count of a DB's unreleased snapshots, and once Restore has
// replaced the DB, the directory its last Release removes.
type pin struct {
	snapshots int
	retired   bool
	dir       string
}

// fsmSnapshot streams a pinned sievekv snapshot of db, which stays open
// until Release (S5).
type fsmSnapshot struct {
	sm       *stateMachine
	db       *kv.DB
	snap     *kv.Snapshot
	applied  uint64
	released sync.Once
}

// Persist writes the snapshot stream (S3) to sink straight from a sievekv
// iterator: memory stays bounded by one key and value, whatever the size
// of the state.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	err := writeSnapshotStream(sink, s.snap, s.applied)
	if err != nil {
		sink.Cancel()
		return fmt.Errorf("kvserver: persist snapshot: %w", err)
	}
	return sink.Close()
}

// Release unpins the snapshot; the last Release of a DB that Restore
// replaced closes it and removes its generation.
func (s *fsmSnapshot) Release() {
	s.released.Do(func() {
		s.snap.Close()
		sm := s.sm
		sm.mu.Lock()
		p := sm.pins[s.db]
		if p == nil { // released after close, which closed every DB
			sm.mu.Unlock()
			return
		}
		p.snapshots--
		last := p.snapshots == 0
		if last {
			delete(sm.pins, s.db)
		}
		sm.mu.Unlock()
		if last && p.retired {
			s.db.Close()
			os.RemoveAll(p.dir)
		}
	})
}

// Restore replaces the state with a snapshot stream: it fills a fresh
// generation, makes it durable, switches CURRENT to it, and only then
// closes and removes the old one (at once, or at the last Release of a
// snapshot still streaming from it: S5). A damaged stream leaves the old
// state.
func (sm *stateMachine) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	gen := sm.gen + 1
	dir := sm.genDir(gen)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("kvserver: restore: %w", err)
	}
	db, err := kv.Open(dir, sm.dbOpts)
	if err != nil {
		return fmt.Errorf("kvserver: restore: open new state: %w", err)
	}
	applied, err := readSnapshotStream(rc, db)
	var cluster clusterRecord
	if err == nil {
		cluster, err = readClusterRecord(db)
	}
	if err == nil {
		// A snapshot names its cluster: one of another cluster would
		// replace this node's state with a stranger's (S13).
		err = sameCluster(sm.clusterID(), cluster.id, "the snapshot")
	}
	if err == nil {
		err = db.Set(appliedKey, binary.BigEndian.AppendUint64(nil, applied), kv.Sync)
	}
	if err == nil {
		err = sm.setCurrent(gen)
	}
	if err != nil {
		db.Close()
		os.RemoveAll(dir)
		return fmt.Errorf("kvserver: restore: %w", err)
	}
	sm.mu.Lock()
	old, oldDir := sm.db, sm.genDir(sm.gen)
	sm.db, sm.gen = db, gen
	sm.applied.Store(applied)
	sm.named(cluster)
	// The failed DB is gone: the new state is whole at applied (S6).
	sm.failed.Store(nil)
	p := sm.pins[old]
	if p != nil {
		// A snapshot still streams from old: its last Release closes it.
		p.retired, p.dir = true, oldDir
	}
	sm.mu.Unlock()
	if p == nil {
		old.Close()
		os.RemoveAll(oldDir)
	}
	return nil
}

// close closes the DB and any DB Restore replaced that a snapshot still
// pins (raft, shut down, holds none).
func (sm *stateMachine) close() error {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for db, p := range sm.pins {
		if p.retired {
			db.Close()
		}
	}
	sm.pins = map[*kv.DB]*pin{}
	return sm.db.Close()
}
