package kv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
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

// versionEdit is the engine's form of a manifest edit.
type versionEdit struct {
	logNum  fileNum // 0 = unchanged
	added   []newTable
	deleted []deletedTable
}

type newTable struct {
	level int
	meta  *tableMeta
}

type deletedTable struct {
	level int
	num   fileNum
}

func (e *versionEdit) toManifest(nextFileNum uint64, lastSeq base.SeqNum) *manifest.VersionEdit {
	me := &manifest.VersionEdit{
		NextFileNumber: nextFileNum, HasNextFileNumber: true,
		LastSequence: uint64(lastSeq), HasLastSequence: true,
	}
	if e.logNum != 0 {
		me.LogNumber, me.HasLogNumber = uint64(e.logNum), true
	}
	for _, dt := range e.deleted {
		me.DeletedTables = append(me.DeletedTables, manifest.DeletedTable{Level: dt.level, FileNum: uint64(dt.num)})
	}
	for _, nt := range e.added {
		t := nt.meta
		me.NewTables = append(me.NewTables, manifest.NewTable{Level: nt.level, Meta: manifest.TableMeta{
			FileNum:     uint64(t.fileNum),
			Size:        t.size,
			Smallest:    t.smallest.Encode(nil),
			Largest:     t.largest.Encode(nil),
			SmallestSeq: uint64(t.smallestSeq),
			LargestSeq:  uint64(t.largestSeq),
			FilterType:  byte(t.filterType),
		}})
	}
	return me
}

// fromManifest converts a decoded edit, validating the internal keys.
func fromManifest(me *manifest.VersionEdit) (*versionEdit, error) {
	e := &versionEdit{}
	if me.HasLogNumber {
		e.logNum = fileNum(me.LogNumber)
	}
	for _, dt := range me.DeletedTables {
		e.deleted = append(e.deleted, deletedTable{level: dt.Level, num: fileNum(dt.FileNum)})
	}
	for _, nt := range me.NewTables {
		m := nt.Meta
		smallest, ok1 := base.DecodeInternalKey(m.Smallest)
		largest, ok2 := base.DecodeInternalKey(m.Largest)
		if !ok1 || !ok2 || base.Compare(smallest, largest) > 0 {
			return nil, base.CorruptionErrorf("kv: manifest: table %06d has invalid key bounds", m.FileNum)
		}
		e.added = append(e.added, newTable{level: nt.Level, meta: &tableMeta{
			fileNum:     fileNum(m.FileNum),
			size:        m.Size,
			smallest:    smallest.Clone(),
			largest:     largest.Clone(),
			smallestSeq: base.SeqNum(m.SmallestSeq),
			largestSeq:  base.SeqNum(m.LargestSeq),
			filterType:  sstable.FilterType(m.FilterType),
		}})
	}
	return e, nil
}

// logAndApplyLocked makes edit durable in the MANIFEST, then installs the
// version it produces (K5). On error nothing is installed; the caller
// decides whether the failure is sticky. REQUIRES: d.mu held.
func (d *DB) logAndApplyLocked(e *versionEdit) error {
	if e.logNum != 0 && e.logNum < d.manifest.logNum {
		e.logNum = d.manifest.logNum
	}
	me := e.toManifest(d.manifest.nextFileNum.Load(), d.lastSeq)
	if err := me.Validate(); err != nil {
		return fmt.Errorf("kv: refusing to log an invalid version edit: %w", err)
	}
	if d.manifest.failed {
		// An earlier record's fate is unknown; nothing may follow it.
		return d.bgErr
	}
	err := func() error {
		if _, err := d.manifest.w.WriteRecord(me.Encode()); err != nil {
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
	return d.applyEditLocked(e)
}

// applyEdit returns the version old+e without touching reference counts.
// It rejects an edit inconsistent with old (deleting a table that is not
// there, adding one twice, overlapping tables in a sorted level) as
// corruption, so MANIFEST replay can use it too.
func applyEdit(old *version, e *versionEdit) (*version, error) {
	nv := &version{}
	deleted := map[fileNum]bool{}
	for _, dt := range e.deleted {
		deleted[dt.num] = true
		found := false
		for _, t := range old.levels[dt.level] {
			found = found || t.fileNum == dt.num
		}
		if !found {
			return nil, base.CorruptionErrorf("kv: version edit deletes table %06d, which is not in L%d", dt.num, dt.level)
		}
	}
	present := map[fileNum]bool{}
	for l := range old.levels {
		for _, t := range old.levels[l] {
			if !deleted[t.fileNum] {
				nv.levels[l] = append(nv.levels[l], t)
				present[t.fileNum] = true
			}
		}
	}
	for _, nt := range e.added {
		if present[nt.meta.fileNum] {
			return nil, base.CorruptionErrorf("kv: version edit adds table %06d twice", nt.meta.fileNum)
		}
		present[nt.meta.fileNum] = true
		nv.levels[nt.level] = append(nv.levels[nt.level], nt.meta)
	}
	nv.sortLevels()
	if err := nv.checkOrdering(); err != nil {
		return nil, err
	}
	return nv, nil
}

// applyEditLocked makes current+e the current version: the new version
// references its tables, tables the edit removed are marked obsolete, and
// the old version is released (its removed tables' files go once no read
// holds them, K5). REQUIRES: d.mu held.
func (d *DB) applyEditLocked(e *versionEdit) error {
	old := d.current
	nv, err := applyEdit(old, e)
	if err != nil {
		return err
	}
	if e.logNum > d.manifest.logNum {
		d.manifest.logNum = e.logNum
	}
	readded := map[fileNum]bool{} // a trivial move deletes and re-adds
	for _, nt := range e.added {
		readded[nt.meta.fileNum] = true
	}
	for _, dt := range e.deleted {
		for _, t := range old.levels[dt.level] {
			if t.fileNum == dt.num && !readded[t.fileNum] {
				t.obsolete.Store(true)
			}
		}
	}
	d.installVersionLocked(nv)
	old.unref()
	return nil
}

// installVersionLocked makes v current, holding one reference to it and,
// through it, to each of its tables. REQUIRES: d.mu held.
func (d *DB) installVersionLocked(v *version) {
	v.onZero = d.releaseVersion
	v.refs.Store(1)
	for _, l := range v.levels {
		for _, t := range l {
			t.refs.Add(1)
		}
	}
	d.current = v
}

// releaseVersion drops a dead version's references to its tables and
// deletes the files of tables that an edit removed and no version still
// includes (K5).
func (d *DB) releaseVersion(v *version) {
	for _, l := range v.levels {
		for _, t := range l {
			if t.refs.Add(-1) == 0 && t.obsolete.Load() {
				d.tables.evict(t.fileNum)
				if err := d.fs.Remove(d.path(fileKindTable, t.fileNum)); err != nil {
					d.opts.Logger("kv: remove obsolete table %06d: %v", t.fileNum, err)
				}
			}
		}
	}
}

// replayManifest folds the MANIFEST that CURRENT names (with the manifest
// package's BulkVersionEdit, which checks every edit against the ones
// before it) into a version, and restores the scalars it records. A torn
// last record is ignored: an edit is applied only after its record is
// synced, so a torn one never took effect.
func (d *DB) replayManifest() (*version, error) {
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
	r := wal.NewReader(io.NewSectionReader(f, 0, 1<<62), uint64(num))
	var fold manifest.BulkVersionEdit
	records := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, wal.ErrTornTail) && records > 0 {
				d.opts.Logger("kv: %s: ignoring torn tail: %v", current, err)
				break
			}
			return nil, base.CorruptionErrorf("kv: %s: %w", current, err)
		}
		records++
		var me manifest.VersionEdit
		if err := me.Decode(rec); err != nil {
			return nil, base.CorruptionErrorf("kv: %s: record %d: %w", current, records, err)
		}
		if err := fold.Accumulate(&me); err != nil {
			return nil, base.CorruptionErrorf("kv: %s: record %d: %w", current, records, err)
		}
	}
	if records == 0 {
		return nil, base.CorruptionErrorf("kv: %s holds no version edit", current)
	}
	state, err := fold.Apply(compareEncodedKeys)
	if err != nil {
		return nil, base.CorruptionErrorf("kv: %s: %w", current, err)
	}
	// One edit that adds every live table, converted like any other.
	e, err := fromManifest(state.Edit())
	if err != nil {
		return nil, err
	}
	v, err := applyEdit(&version{}, e)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, current)
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
	return v, nil
}

// compareEncodedKeys orders encoded internal keys for the manifest fold;
// keys that do not decode sort by bytes (fromManifest rejects them later).
func compareEncodedKeys(a, b []byte) int {
	ka, ok1 := base.DecodeInternalKey(a)
	kb, ok2 := base.DecodeInternalKey(b)
	if !ok1 || !ok2 {
		return bytes.Compare(a, b)
	}
	return base.Compare(ka, kb)
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
	snap := &versionEdit{logNum: logNum}
	for l, ts := range d.current.levels {
		for _, t := range ts {
			snap.added = append(snap.added, newTable{level: l, meta: t})
		}
	}
	me := snap.toManifest(d.manifest.nextFileNum.Load(), d.lastSeq)
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
	for _, l := range d.current.levels {
		for _, t := range l {
			live[t.fileNum] = true
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
