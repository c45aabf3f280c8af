package kv

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/wal"
)

// manifestState is the live MANIFEST and the scalars it records.
type manifestState struct {
	nextFileNum atomic.Uint64
	logNum      fileNum // WALs below this are flushed (K6); guarded by DB.mu
	num         fileNum // the live MANIFEST's file number
	file        vfs.File
	w           *wal.Writer
	// failed is set once a write or sync of the live MANIFEST failed:
	// whether its last record reached the disk is unknown. Guarded by
	// DB.mu.
	failed bool
}

func (m *manifestState) bumpNextFileNum(n fileNum) {
	for {
		cur := m.nextFileNum.Load()
		if uint64(n) <= cur || m.nextFileNum.CompareAndSwap(cur, uint64(n)) {
			return
		}
	}
}

func (m *manifestState) close() error {
	if m.w == nil {
		return nil
	}
	err := m.w.Close()
	if cerr := m.file.Close(); err == nil {
		err = cerr
	}
	m.w, m.file = nil, nil
	return err
}

// logAndApplyLocked makes e durable in the MANIFEST, then installs the
// version it produces (K5). The edit is folded onto the current version
// first, so an edit inconsistent with it never reaches the MANIFEST. On
// error nothing is installed; the caller decides whether the failure is
// sticky. REQUIRES: d.mu held.
func (d *DB) logAndApplyLocked(e *manifest.VersionEdit) error {
	if e.HasLogNumber && e.LogNumber < uint64(d.manifest.logNum) {
		e.LogNumber = uint64(d.manifest.logNum)
	}
	e.NextFileNumber, e.HasNextFileNumber = d.manifest.nextFileNum.Load(), true
	e.LastSequence, e.HasLastSequence = uint64(d.lastSeq), true
	if err := e.Validate(); err != nil {
		return fmt.Errorf("kv: refusing to log an invalid version edit: %w", err)
	}
	nv, err := d.foldLocked(e)
	if err != nil {
		return err
	}
	if d.manifest.failed {
		// An earlier record's fate is unknown; nothing may follow it.
		return d.bgErr
	}
	err = func() error {
		if _, err := d.manifest.w.WriteRecord(e.Encode()); err != nil {
			return fmt.Errorf("kv: write MANIFEST-%06d: %w", d.manifest.num, err)
		}
		if err := d.manifest.w.Sync(); err != nil {
			return fmt.Errorf("kv: sync MANIFEST-%06d: %w", d.manifest.num, err)
		}
		return nil
	}()
	if err != nil {
		// The record may or may not be in the file, and may be read back
		// by the next Open: the edit's tables must stay (removeFiles
		// keeps them) and no further edit may be appended. Sticky.
		d.manifest.failed = true
		d.setBackgroundErrorLocked("kv: MANIFEST update", err)
		return err
	}
	d.installEditLocked(e, nv)
	return nil
}

// applyEditLocked installs current+e without logging it (Open's recovery
// flush, which the fresh MANIFEST Open writes next records). REQUIRES: d.mu
// held.
func (d *DB) applyEditLocked(e *manifest.VersionEdit) error {
	nv, err := d.foldLocked(e)
	if err != nil {
		return err
	}
	d.installEditLocked(e, nv)
	return nil
}

// foldLocked returns the version current+e, with the same fold MANIFEST
// replay uses: an edit inconsistent with the current version (deleting a
// table that is not there, adding one twice, overlapping tables in a
// sorted level) is corruption. REQUIRES: d.mu held.
func (d *DB) foldLocked(e *manifest.VersionEdit) (*manifest.Version, error) {
	b := manifest.NewBulkVersionEdit(d.current)
	if err := b.Accumulate(e); err != nil {
		return nil, base.CorruptionErrorf("kv: version edit: %w", err)
	}
	s, err := b.Apply()
	if err != nil {
		return nil, base.CorruptionErrorf("kv: version edit: %w", err)
	}
	return s.Version, nil
}

// installEditLocked makes nv (current+e) the current version: tables the
// edit removed are marked obsolete, and the old version is released (its
// removed tables' files go once no read holds them, K5). REQUIRES: d.mu
// held.
func (d *DB) installEditLocked(e *manifest.VersionEdit, nv *manifest.Version) {
	old := d.current
	if e.HasLogNumber && fileNum(e.LogNumber) > d.manifest.logNum {
		d.manifest.logNum = fileNum(e.LogNumber)
	}
	readded := map[uint64]bool{} // a trivial move deletes and re-adds
	for _, nt := range e.NewTables {
		readded[nt.Meta.FileNum] = true
	}
	for _, dt := range e.DeletedTables {
		for _, t := range old.Levels[dt.Level] {
			if t.FileNum == dt.FileNum && !readded[t.FileNum] {
				t.MarkObsolete()
			}
		}
	}
	d.installVersionLocked(nv)
	old.Unref()
}

// installVersionLocked publishes v as current, holding one reference to it
// and, through it, to each of its tables. REQUIRES: d.mu held.
func (d *DB) installVersionLocked(v *manifest.Version) {
	v.Publish(d.releaseTable)
	d.current = v
	d.publishReadStateLocked()
	d.filterBudget.version.Store(v)
}

// releaseTable deletes the file of a table that no published version
// includes any more, if an edit removed it (K5).
func (d *DB) releaseTable(t *manifest.TableMetadata) {
	if !t.Obsolete() {
		return
	}
	num := fileNum(t.FileNum)
	d.tables.evict(num)
	if err := d.fs.Remove(d.path(fileKindTable, num)); err != nil {
		d.opts.Logger("kv: remove obsolete table %06d: %v", num, err)
	}
}

// replayManifest folds the MANIFEST that CURRENT names (with
// manifest.Replay, through BulkVersionEdit, the fold every version change
// uses, which checks every edit against the ones before it) into a version, and
// restores the scalars it records. A torn
// last record is ignored: an edit is applied only after its record is
// synced, so a torn one never took effect.
func (d *DB) replayManifest() (*manifest.Version, error) {
	current, err := d.readCurrent()
	if err != nil {
		return nil, err
	}
	kind, num, ok := parseFileName(current)
	if !ok || kind != fileKindManifest {
		return nil, base.CorruptionErrorf("kv: CURRENT names %q, not a manifest", current)
	}
	f, err := d.fs.Open(d.fs.PathJoin(d.dirname, current))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// CURRENT only ever names a synced, complete manifest.
			return nil, base.CorruptionErrorf("kv: CURRENT names %s, which is missing: %w", current, err)
		}
		return nil, fmt.Errorf("kv: open %s: %w", current, err)
	}
	defer f.Close()
	fold, records, err := manifest.Replay(wal.NewReader(io.NewSectionReader(f, 0, 1<<62), uint64(num)))
	if err != nil {
		if errors.Is(err, wal.ErrRead) {
			return nil, fmt.Errorf("kv: %s: %w", current, err) // not damaged data
		}
		if !errors.Is(err, wal.ErrTornTail) || records == 0 {
			return nil, base.CorruptionErrorf("kv: %s: %w", current, err)
		}
		d.opts.Logger("kv: %s: ignoring torn tail: %v", current, err)
	}
	if records == 0 {
		return nil, base.CorruptionErrorf("kv: %s holds no version edit", current)
	}
	state, err := fold.Apply()
	if err != nil {
		return nil, base.CorruptionErrorf("kv: %s: %w", current, err)
	}
	// The WAL the manifest names as the oldest needed was created and
	// synced into the directory before any edit named it, and is deleted
	// only after a later edit moves the log number past it (K6). If it is
	// gone, edits were lost: a torn-looking tail that was in fact synced
	// and applied (bit rot, truncation), whose tables Open would otherwise
	// delete as orphans while their WALs are long gone.
	if state.LogNumber != 0 {
		walName := fileName(fileKindLog, fileNum(state.LogNumber))
		if _, err := d.fs.Stat(d.path(fileKindLog, fileNum(state.LogNumber))); errors.Is(err, fs.ErrNotExist) {
			return nil, base.CorruptionErrorf("kv: %s: its oldest needed WAL %s is missing: the MANIFEST lost edits or the WAL was deleted", current, walName)
		}
	}
	d.manifest.logNum = fileNum(state.LogNumber)
	// The replayed manifest is live until Open writes a new one; errors
	// about the tables it names cite it.
	d.manifest.num = num
	d.lastSeq = base.SeqNum(state.LastSequence)
	d.manifest.bumpNextFileNum(fileNum(state.NextFileNumber))
	d.manifest.bumpNextFileNum(num + 1)
	return state.Version, nil
}

// readCurrent returns the manifest name CURRENT holds.
func (d *DB) readCurrent() (string, error) {
	f, err := d.fs.Open(d.path(fileKindCurrent, 0))
	if err != nil {
		return "", fmt.Errorf("kv: open CURRENT: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("kv: read CURRENT: %w", err)
	}
	s := string(buf[:n])
	if n == 0 || n == len(buf) || !strings.HasSuffix(s, "\n") {
		return "", base.CorruptionErrorf("kv: CURRENT is malformed (%d bytes)", n)
	}
	return strings.TrimSuffix(s, "\n"), nil
}

// createManifestLocked starts a new MANIFEST holding the whole current
// state, and makes it current via a synced temp file, a rename and a
// directory sync, so CURRENT always names a complete manifest.
// REQUIRES: d.mu held.
func (d *DB) createManifestLocked(logNum fileNum) error {
	num, err := d.allocFileNum()
	if err != nil {
		return err
	}
	name := fileName(fileKindManifest, num)
	f, err := d.fs.Create(d.fs.PathJoin(d.dirname, name))
	if err != nil {
		return fmt.Errorf("kv: create %s: %w", name, err)
	}
	w := wal.NewWriter(f, f, uint64(num))
	snap := &manifest.State{
		LogNumber:      uint64(logNum),
		NextFileNumber: d.manifest.nextFileNum.Load(),
		LastSequence:   uint64(d.lastSeq),
		Version:        d.current,
	}
	me := snap.Edit()
	me.HasLogNumber = logNum != 0
	err = me.Validate()
	if err == nil {
		_, err = w.WriteRecord(me.Encode())
	}
	if err == nil {
		err = w.Sync()
	}
	if err != nil {
		w.Close()
		f.Close()
		d.fs.Remove(d.fs.PathJoin(d.dirname, name))
		return fmt.Errorf("kv: write %s: %w", name, err)
	}
	if err := d.setCurrent(name); err != nil {
		w.Close()
		f.Close()
		return err
	}
	d.manifest.close()
	d.manifest.num, d.manifest.file, d.manifest.w = num, f, w
	if logNum > d.manifest.logNum {
		d.manifest.logNum = logNum
	}
	return nil
}

func (d *DB) setCurrent(manifestName string) error {
	tmpNum, err := d.allocFileNum()
	if err != nil {
		return err
	}
	tmp := d.path(fileKindTemp, tmpNum)
	f, err := d.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("kv: create %s: %w", tmp, err)
	}
	_, err = f.Write([]byte(manifestName + "\n"))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.fs.Rename(tmp, d.path(fileKindCurrent, 0))
	}
	if err != nil {
		d.fs.Remove(tmp)
		return fmt.Errorf("kv: update CURRENT: %w", err)
	}
	return d.syncDir()
}

// deleteObsoleteFilesLocked removes every file of the DB that no state
// needs: WALs below the log number, manifests but the live one, temp files
// and tables no version names (orphans of a crashed flush or compaction).
// REQUIRES: d.mu held; called from Open, when no read holds a version.
func (d *DB) deleteObsoleteFilesLocked() {
	names, err := d.fs.List(d.dirname)
	if err != nil {
		d.opts.Logger("kv: list %s: %v", d.dirname, err)
		return
	}
	live := map[fileNum]bool{}
	for _, l := range d.current.Levels {
		for _, t := range l {
			live[fileNum(t.FileNum)] = true
		}
	}
	for _, n := range names {
		kind, num, ok := parseFileName(n)
		if !ok {
			continue
		}
		var obsolete bool
		switch kind {
		case fileKindLog:
			obsolete = num < d.manifest.logNum
		case fileKindManifest:
			obsolete = num != d.manifest.num
		case fileKindTemp:
			obsolete = true
		case fileKindTable:
			obsolete = !live[num]
		}
		if obsolete {
			if err := d.fs.Remove(d.fs.PathJoin(d.dirname, n)); err != nil {
				d.opts.Logger("kv: remove obsolete %s: %v", n, err)
			}
		}
	}
}
