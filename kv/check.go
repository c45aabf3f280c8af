package kv

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
)

// CheckReport is what Check found in a closed database directory.
type CheckReport struct {
	// Manifest is the MANIFEST that CURRENT names ("" if unreadable).
	Manifest string
	// Tables and Entries count the live tables and the entries iterated
	// in them; Levels counts the tables per level.
	Tables  int
	Entries uint64
	Levels  [NumLevels]int
	// WALs and WALRecords count the write-ahead logs recovery would
	// replay and the batches decoded from them.
	WALs       int
	WALRecords int
	// LastSeq is the largest sequence number the manifest and the WALs
	// account for.
	LastSeq uint64
	// Problems lists every violated checksum or invariant. Each wraps
	// ErrCorruption and names the file it was found in.
	Problems []error
	// Notes lists what is harmless but worth knowing: a torn WAL or
	// MANIFEST tail (what a crash leaves; Open cuts it off), and orphaned
	// files that Open will remove.
	Notes []string
}

// OK reports whether no problem was found.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 }

// Err joins the problems into one error (nil if none).
func (r *CheckReport) Err() error { return errors.Join(r.Problems...) }

// String renders the report, one problem or note per line.
func (r *CheckReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "manifest %s: %d tables (", r.Manifest, r.Tables)
	for l, n := range r.Levels {
		if l > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "L%d:%d", l, n)
	}
	fmt.Fprintf(&b, "), %d entries; %d WALs, %d records; last seq %d\n", r.Entries, r.WALs, r.WALRecords, r.LastSeq)
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "PROBLEM: %v\n", p)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if r.OK() {
		b.WriteString("OK\n")
	}
	return b.String()
}

// Check verifies every checksum and ordering invariant of the closed
// database in dirname without changing it: the MANIFEST replays (each edit
// consistent with the ones before, sorted levels without overlap); every
// live table exists with the manifest's size, opens, and iterates fully
// with keys strictly increasing (B1) within the manifest's bounds and
// sequence numbers, as many entries as its properties say; every WAL that
// recovery would replay decodes into valid batches with increasing
// sequence numbers. Only opts.FS matters in opts (nil: the OS).
//
// The returned error is for a check that could not run (no database:
// ErrDBDoesNotExist; the directory locked by a read-write open:
// ErrLocked); what is wrong with
// the data is listed in the report's Problems. Check writes nothing: it
// runs beside read-only opens and on a read-only mount.
func Check(dirname string, opts *Options) (*CheckReport, error) {
	var o Options
	if opts != nil {
		o.FS = opts.FS
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	rep := &CheckReport{}
	o.Logger = func(format string, args ...any) {
		rep.Notes = append(rep.Notes, fmt.Sprintf(format, args...))
	}
	// Check only reads, so it locks as a ReadOnly open does: a shared lock
	// that excludes a writer and coexists with read-only opens, and none
	// at all (nothing created) where LOCK does not exist, on a read-only
	// mount or in a directory that holds no database.
	o.ReadOnly = true
	d := &DB{dirname: dirname, opts: o, fs: o.FS}
	lock, err := d.lockDir()
	if err != nil {
		return nil, fmt.Errorf("kv: check %s: %w", dirname, err)
	}
	defer lock.Close()
	names, err := d.fs.List(dirname)
	if err != nil {
		return nil, fmt.Errorf("kv: check %s: %w", dirname, err)
	}
	if !slices.Contains(names, fileName(fileKindCurrent, 0)) {
		if err := d.checkNoCurrent(names); err != nil {
			rep.Problems = append(rep.Problems, err)
			return rep, nil
		}
		return nil, fmt.Errorf("kv: check %s: %w (no CURRENT): %w", dirname, ErrDBDoesNotExist, fs.ErrNotExist)
	}
	problem := func(err error) {
		if !errors.Is(err, ErrCorruption) {
			err = base.CorruptionErrorf("%w", err)
		}
		rep.Problems = append(rep.Problems, err)
	}

	if cur, err := d.readCurrent(); err == nil {
		rep.Manifest = cur
	}
	v, err := d.replayManifest()
	if err != nil {
		// Without a version there are no tables to check against; the
		// WALs can still be checked.
		problem(err)
		v = &manifest.Version{}
	}
	rep.LastSeq = uint64(d.lastSeq)

	live := map[fileNum]bool{}
	for l, ts := range v.Levels {
		for _, t := range ts {
			live[fileNum(t.FileNum)] = true
			rep.Tables++
			rep.Levels[l]++
			for _, p := range d.checkTable(l, t, rep) {
				problem(p)
			}
		}
	}

	var logs []fileNum
	for _, n := range names {
		k, num, ok := parseFileName(n)
		if !ok {
			continue
		}
		switch {
		case k == fileKindLog && num >= d.manifest.logNum:
			logs = append(logs, num)
		case k == fileKindTable && !live[num]:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s is not in the manifest (an orphan Open removes)", n))
		}
	}
	slices.Sort(logs)
	rep.WALs = len(logs)
	lastSeq := d.lastSeq
	if err := d.checkWALs(logs, &lastSeq, rep); err != nil {
		problem(err)
	}
	rep.LastSeq = uint64(max(lastSeq, d.lastSeq))
	return rep, nil
}

// checkTable iterates table t of level l and returns what is wrong with it.
func (d *DB) checkTable(level int, t *manifest.TableMetadata, rep *CheckReport) []error {
	name := fileName(fileKindTable, fileNum(t.FileNum))
	f, err := d.fs.Open(d.path(fileKindTable, fileNum(t.FileNum)))
	if err != nil {
		return []error{base.CorruptionErrorf("kv: table %s (L%d) named by the manifest cannot be opened: %w", name, level, err)}
	}
	if st, err := f.Stat(); err == nil && uint64(st.Size()) != t.Size {
		f.Close()
		return []error{base.CorruptionErrorf("kv: table %s: size %d, the manifest says %d", name, st.Size(), t.Size)}
	}
	r, err := sstable.Open(f, int64(t.Size), sstable.ReaderOptions{FileNum: t.FileNum, Name: name})
	if err != nil {
		f.Close()
		return []error{fmt.Errorf("kv: table %s: %w", name, err)}
	}
	defer r.Close()
	var probs []error
	bad := func(format string, args ...any) {
		probs = append(probs, base.CorruptionErrorf("kv: table %s: "+format, append([]any{name}, args...)...))
	}
	// The read path leaves the full per-entry check of data blocks to
	// invariants builds (sstable T4); Check always runs it, so restart
	// and order defects that a forward scan cannot see are found too.
	if err := r.VerifyBlocks(); err != nil {
		probs = append(probs, fmt.Errorf("kv: table %s: %w", name, err))
	}
	p := r.Properties()
	it := r.NewIter(nil, nil)
	it.SkipCacheFill() // Check reads every block once: keep the readers' blocks
	var prev base.InternalKey
	var n uint64
	for ok := it.First(); ok && len(probs) < 10; ok = it.Next() {
		k := it.Key()
		if n > 0 && base.Compare(prev, k) >= 0 {
			bad("entry %d: key %s is not after %s", n, k, prev)
		}
		if base.Compare(k, t.Smallest) < 0 || base.Compare(k, t.Largest) > 0 {
			bad("entry %d: key %s is outside the manifest's bounds [%s, %s]", n, k, t.Smallest, t.Largest)
		}
		if s := k.SeqNum(); s < t.SmallestSeq || s > t.LargestSeq {
			bad("entry %d: key %s has a sequence number outside the manifest's [%d, %d]", n, k, t.SmallestSeq, t.LargestSeq)
		}
		if !k.Kind().Valid() {
			bad("entry %d: key %s has an invalid kind", n, k)
		}
		// Range tombstones may widen a table's bounds past its points
		// (kv/rangedel_output.go).
		if n == 0 && base.Compare(k, t.Smallest) != 0 && p.NumRangeDeletions == 0 {
			bad("first key %s is not the manifest's smallest %s", k, t.Smallest)
		}
		prev = k.Clone()
		n++
	}
	if err := it.Close(); err != nil {
		probs = append(probs, fmt.Errorf("kv: table %s: after %d entries: %w", name, n, err))
	} else if len(probs) == 0 {
		if n != p.NumEntries {
			bad("iterated %d entries, its properties say %d", n, p.NumEntries)
		}
		if n > 0 && base.Compare(prev, t.Largest) != 0 && p.NumRangeDeletions == 0 {
			bad("last key %s is not the manifest's largest %s", prev, t.Largest)
		}
		if uint64(t.LargestSeq) > uint64(d.lastSeq) {
			bad("holds sequence number %d beyond the manifest's last %d", t.LargestSeq, d.lastSeq)
		}
	}
	for _, rd := range r.RangeDels() {
		// K8 needs every tombstone inside its table's bounds.
		if base.CompareUserKeys(rd.Start, t.Smallest.UserKey) < 0 || base.CompareUserKeys(tombstoneLargest(rd).UserKey, t.Largest.UserKey) > 0 ||
			rd.Seq < t.SmallestSeq || rd.Seq > t.LargestSeq {
			bad("range tombstone %v is outside the manifest's bounds [%s, %s], seqnums [%d, %d]", rd, t.Smallest, t.Largest, t.SmallestSeq, t.LargestSeq)
		}
	}
	rep.Entries += n
	return probs
}

// checkWALs decodes every batch of the WALs recovery would replay, as
// recovery reads them (readLogChain, K11): where a crash or power loss
// cut the chain of logs, a note (recovery drops the rest); any other
// damage, or sequence numbers that do not increase within a log, a
// problem.
func (d *DB) checkWALs(logs []fileNum, lastSeq *base.SeqNum, rep *CheckReport) error {
	note := func(msg string) { rep.Notes = append(rep.Notes, msg) }
	var (
		log      fileNum
		prevLast base.SeqNum
	)
	return d.readLogChain(logs, note, func(rec walRecord) error {
		rep.WALRecords++
		if rec.log != log {
			log, prevLast = rec.log, 0
		}
		if rec.count == 0 {
			return nil
		}
		if rec.first <= prevLast {
			return base.CorruptionErrorf("kv: WAL %s: record ending at offset %d starts at sequence %d, not after %d", fileName(fileKindLog, rec.log), rec.end, rec.first, prevLast)
		}
		prevLast = rec.first + base.SeqNum(rec.count) - 1
		*lastSeq = max(*lastSeq, prevLast)
		return nil
	})
}
