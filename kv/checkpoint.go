package kv

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/wal"
)

// ErrCheckpointDirNotEmpty is returned by Checkpoint when its directory
// already holds files: a checkpoint never mixes with, or overwrites, what
// is there.
var ErrCheckpointDirNotEmpty = errors.New("kv: checkpoint directory is not empty")

// Checkpoint writes a consistent, openable copy of the DB into dir, which
// must not exist or be empty (ErrCheckpointDirNotEmpty otherwise), and
// inside the DB's own directory must not have the name of one of the DB's
// files (ErrInvalidArgument: Open would take it for one). Writers
// may run meanwhile: the checkpoint holds exactly the writes committed up
// to one moment during the call, whole batches only (K2), and nothing
// committed after Checkpoint returns.
//
// The moment is fixed by a flush: Checkpoint first flushes the memtables,
// then takes the version that is current, which by then holds every write
// the flush covered and possibly more that later flushes added — always a
// prefix of the commit order, because memtables are flushed in order and
// rotate only between commit groups. The checkpoint therefore needs no WAL:
// its MANIFEST names the version's tables and no log. Flushing first costs
// one L0 table per checkpoint but needs no cutting of a live WAL at a
// sequence number, which a concurrent commit may be appending to.
//
// Tables are immutable, so each is hard-linked into dir where the file
// system allows it (vfs.Linker) and copied otherwise (across devices, or
// on a file system that cannot link). The reference Checkpoint holds on
// the version keeps the source's files from being deleted under it (K5).
// The checkpoint shares no file that either side ever modifies, so it
// stands alone once the source is deleted, and opening it is an ordinary
// Open. CURRENT is written last: a checkpoint cut short by a crash has
// none, and the source is never modified by a checkpoint beyond the flush.
// A Checkpoint that fails (a full disk, or Close winning a race with it)
// removes the files it created and the directory if it made it.
//
// A ReadOnly DB cannot flush and returns ErrReadOnly.
func (d *DB) Checkpoint(dir string) error {
	if dir == "" {
		return fmt.Errorf("%w: Checkpoint: the directory name is empty", ErrInvalidArgument)
	}
	// A DB that cannot flush fails before dir is made: a closed or
	// read-only DB must not leave an empty directory behind, nor report
	// a full dir ahead of its own state.
	d.mu.Lock()
	err := d.writableLocked()
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("kv: checkpoint %s: %w", dir, err)
	}
	// Checkpoints of one DB run one at a time, so a second one into the
	// same directory finds it non-empty instead of racing the first to
	// each file name (linkOrCopy refuses a taken name either way, which
	// covers checkpoints from other processes).
	d.checkpointMu.Lock()
	defer d.checkpointMu.Unlock()
	out, err := d.prepareCheckpointDir(dir)
	if err != nil {
		return err
	}
	if err := d.writeCheckpoint(out); err != nil {
		// A checkpoint that lost a race with Close, or ran out of room,
		// leaves nothing: the user's retry into the same name must not
		// find it not empty, nor a half-copy without CURRENT.
		if uerr := out.undo(); uerr != nil {
			return fmt.Errorf("kv: checkpoint %s: %w (and removing what it wrote: %v)", dir, err, uerr)
		}
		return fmt.Errorf("kv: checkpoint %s: %w", dir, err)
	}
	return nil
}

// writeCheckpoint is Checkpoint into out, an empty directory.
func (d *DB) writeCheckpoint(out *checkpointOutput) error {
	if err := d.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	v := d.current
	v.Ref()
	state := &manifest.State{
		// Every table's sequence numbers are at or below lastSeq, so the
		// checkpoint's next write is numbered above all it holds.
		LastSequence: uint64(d.lastSeq),
		Version:      v,
	}
	// File numbers at or above next are free in the source, hence in the
	// checkpoint, whose tables keep their numbers.
	next := fileNum(d.manifest.nextFileNum.Load())
	d.mu.Unlock()
	defer v.Unref()
	// The MANIFEST takes number next: past maxFileNum, a name Open does
	// not take for a manifest, so CURRENT would name none. (The temp file
	// at next+1 is renamed away; a read-only Open needs no number.)
	if next > maxFileNum {
		return fmt.Errorf("%w: the checkpoint's MANIFEST would be number %d, past %d", ErrFileNumbersExhausted, next, maxFileNum)
	}

	dir := out.dir
	for _, level := range v.Levels {
		for _, t := range level {
			name := fileName(fileKindTable, fileNum(t.FileNum))
			err := linkOrCopy(d.fs, d.fs.PathJoin(d.dirname, name), d.fs.PathJoin(dir, name), t.Size, out.wrote)
			if err != nil {
				return err
			}
		}
	}
	// The tables' names must be durable before a MANIFEST that names them.
	if err := vfs.SyncDir(d.fs, dir); err != nil {
		return err
	}
	// next is the MANIFEST, next+1 the temp file CURRENT is written as.
	manifestNum, tempNum := next, next+1
	state.NextFileNumber = uint64(next + 2)
	if err := writeCheckpointManifest(d.fs, dir, manifestNum, state, out.wrote); err != nil {
		return err
	}
	return writeCheckpointCurrent(d.fs, dir, fileName(fileKindManifest, manifestNum), fileName(fileKindTemp, tempNum), out.wrote)
}

// checkpointOutput is what one Checkpoint made, so a failed one can
// remove it: the directory if it did not exist, and the files it created,
// never a name someone else took meanwhile.
type checkpointOutput struct {
	fs      vfs.FS
	dir     string
	madeDir bool
	files   []string
}

// wrote records that the checkpoint created the file name.
func (o *checkpointOutput) wrote(name string) { o.files = append(o.files, name) }

// undo removes what the checkpoint made, newest first.
func (o *checkpointOutput) undo() error {
	var errs []error
	for i := len(o.files) - 1; i >= 0; i-- {
		if err := o.fs.Remove(o.files[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if o.madeDir && len(errs) == 0 {
		if err := o.fs.Remove(o.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// prepareCheckpointDir creates dir, or accepts it if it exists and is
// empty.
func (d *DB) prepareCheckpointDir(dir string) (*checkpointOutput, error) {
	if samePath(dir, d.dirname) {
		// Said plainly rather than as an entry count: the count of a live
		// DB's directory changes under the user (a WAL made ahead).
		return nil, fmt.Errorf("%w: %s is the database's own directory", ErrCheckpointDirNotEmpty, dir)
	}
	// Open and Check take an entry of the DB's directory with one of its
	// files' names for that file (a directory 000100.log for a WAL to
	// replay), and the DB would no longer open: refused whether dir is
	// that entry or lies below it (MkdirAll would make it).
	for p := filepath.Clean(dir); filepath.Dir(p) != p; p = filepath.Dir(p) {
		if !samePath(filepath.Dir(p), d.dirname) {
			continue
		}
		if _, _, ok := parseFileName(filepath.Base(p)); ok {
			return nil, fmt.Errorf("%w: Checkpoint: %s would put %s, the name of one of the database's own files, in its directory", ErrInvalidArgument, dir, filepath.Base(p))
		}
	}
	out := &checkpointOutput{fs: d.fs, dir: dir}
	names, err := d.fs.List(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Only the last element is removed on failure: parents made here
		// are left, as MkdirAll's are. If MkdirAll fails, dir is removed
		// only if it is now an empty directory (made here, its parent's
		// sync failing): the name may be a file, whatever List said, or
		// someone else's, and neither is the checkpoint's to remove.
		if err := vfs.MkdirAllDurable(d.fs, dir, 0o755); err != nil {
			if entries, lerr := d.fs.List(dir); lerr == nil && len(entries) == 0 {
				d.fs.Remove(dir)
			}
			return nil, fmt.Errorf("kv: checkpoint: create %s: %w", dir, err)
		}
		out.madeDir = true
	case err != nil:
		return nil, fmt.Errorf("kv: checkpoint: list %s: %w", dir, err)
	case len(names) > 0:
		return nil, fmt.Errorf("%w: %s holds %d entries", ErrCheckpointDirNotEmpty, dir, len(names))
	}
	return out, nil
}

// linkOrCopy gives the immutable file src the name dst, by a hard link if
// the FS can make one and by a synced copy of its first size bytes if not.
//
// An existing dst is never written over: it may be a hard link to src
// itself (another checkpoint into the same directory linked it first),
// and Create would truncate the shared file, the source DB's live table.
func linkOrCopy(fsys vfs.FS, src, dst string, size uint64, created func(string)) error {
	if l, ok := fsys.(vfs.Linker); ok {
		err := l.Link(src, dst)
		if err == nil {
			created(dst)
			return nil
		}
		if errors.Is(err, fs.ErrExist) {
			return dstTaken(dst)
		}
		// EXDEV or a file system without links: copying gives the same
		// content.
	}
	if _, err := fsys.Stat(dst); err == nil {
		return dstTaken(dst)
	}
	in, err := fsys.Open(src)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	out, err := fsys.Create(dst)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	created(dst)
	n, err := io.Copy(out, io.NewSectionReader(in, 0, int64(size)))
	if err == nil && uint64(n) != size {
		err = fmt.Errorf("copied %d of %d bytes", n, size)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

func dstTaken(dst string) error {
	return fmt.Errorf("%w: %s appeared while the checkpoint was written (another checkpoint into the same directory?)",
		ErrCheckpointDirNotEmpty, dst)
}

// writeCheckpointManifest writes MANIFEST-num in dir holding the whole
// state as one edit, synced.
func writeCheckpointManifest(fsys vfs.FS, dir string, num fileNum, state *manifest.State, created func(string)) error {
	name := fileName(fileKindManifest, num)
	e := state.Edit()
	// No WAL: the flush put every write of the checkpoint in its tables.
	e.HasLogNumber = false
	if err := e.Validate(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	f, err := fsys.Create(fsys.PathJoin(dir, name))
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	created(fsys.PathJoin(dir, name))
	w := wal.NewWriter(f, f, uint64(num))
	_, err = w.WriteRecord(e.Encode())
	if err == nil {
		err = w.Sync()
	}
	// Both close whatever happened above; cmp.Or keeps the first failure.
	if err := cmp.Or(err, w.Close(), f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// writeCheckpointCurrent writes CURRENT, naming the manifest, as the temp
// file tempName renamed once synced, and syncs the directory. So CURRENT
// exists only whole: a crash before the rename leaves a checkpoint with
// no CURRENT, which is not a DB, rather than one whose CURRENT is empty
// or torn, which Open reports as corruption. (Written in place, a kill
// between the create and the write left a 0-byte CURRENT:
// TestCheckpointKillLeavesSourceIntact caught one.)
func writeCheckpointCurrent(fsys vfs.FS, dir, manifestName, tempName string, created func(string)) error {
	tmp := fsys.PathJoin(dir, tempName)
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("create CURRENT: %w", err)
	}
	created(tmp)
	_, err = f.Write([]byte(manifestName + "\n"))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write CURRENT: %w", err)
	}
	name := fsys.PathJoin(dir, fileName(fileKindCurrent, 0))
	if err := fsys.Rename(tmp, name); err != nil {
		return fmt.Errorf("rename CURRENT into place: %w", err)
	}
	created(name)
	return vfs.SyncDir(fsys, dir)
}

// samePath reports whether a and b name one directory as far as their
// spelling tells (cleaned, and made absolute where the OS can).
func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}
