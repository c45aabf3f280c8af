package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/sievekv/sievekv/kv"
)

// A snapshot stream (docs/format.md, "kvserver snapshot stream"):
//
//	magic "SKVSNAP1" (8) | uvarint applied index
//	records: 0x01 | uvarint len(key) | key | uvarint len(value) | value
//	end:     0x00 | crc32c of every byte before it (the 0x00 included), 4 bytes LE
//
// key is a state DB key (user, member or fresh-join prefix included), or
// clusterKey.
const snapshotMagic = "SKVSNAP1"

const (
	recordPair byte = 1
	recordEnd  byte = 0
)

// maxSnapshotField bounds one key or value of a stream, so a damaged
// length cannot make Restore allocate without bound.
const maxSnapshotField = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// writeSnapshotStream writes the cluster ID, member and user keys of snap
// to w.
func writeSnapshotStream(w io.Writer, snap *kv.Snapshot, applied uint64) error {
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10)
	bw.WriteString(snapshotMagic)
	var tmp [binary.MaxVarintLen64]byte
	bw.Write(binary.AppendUvarint(tmp[:0], applied))
	for _, p := range []byte{clusterKey[0], freshJoinPrefix, memberPrefix, userPrefix} {
		// One pass over the whole state: leave the block cache to the
		// server's reads.
		it := snap.NewIter(&kv.IterOptions{LowerBound: []byte{p}, UpperBound: []byte{p + 1}, SkipCacheFill: true})
		for ok := it.First(); ok; ok = it.Next() {
			bw.WriteByte(recordPair)
			bw.Write(binary.AppendUvarint(tmp[:0], uint64(len(it.Key()))))
			bw.Write(it.Key())
			bw.Write(binary.AppendUvarint(tmp[:0], uint64(len(it.Value()))))
			bw.Write(it.Value())
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	bw.WriteByte(recordEnd)
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// readSnapshotPreamble reads a stream's magic and applied index: the start
// readSnapshotHead and readSnapshotStream share.
func readSnapshotPreamble(br *crcReader) (uint64, error) {
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != snapshotMagic {
		return 0, fmt.Errorf("%w: snapshot stream does not start with %q", ErrBadCommand, snapshotMagic)
	}
	applied, err := binary.ReadUvarint(br)
	if err != nil {
		return 0, fmt.Errorf("%w: snapshot applied index: %v", ErrBadCommand, err)
	}
	return applied, nil
}

// readSnapshotHead reads what a stream's start says of it: its applied
// index, and its cluster ID (S13; zero if the stream names none), the
// first record when present. Nothing else is checked: Restore verifies
// the whole stream.
func readSnapshotHead(r io.Reader) (uint64, clusterID, error) {
	br := newCRCReader(r, 4<<10)
	applied, id, err := readSnapshotHeadFrom(br)
	return applied, id, br.readFailure(err)
}

func readSnapshotHeadFrom(br *crcReader) (uint64, clusterID, error) {
	applied, err := readSnapshotPreamble(br)
	if err != nil {
		return 0, clusterID{}, err
	}
	if tag, err := br.ReadByte(); err != nil || tag != recordPair {
		return applied, clusterID{}, nil
	}
	key, err := readField(br, "key", 0)
	if err != nil || !bytes.Equal(key, clusterKey) {
		return applied, clusterID{}, err
	}
	value, err := readField(br, "value", 0)
	if err != nil {
		return 0, clusterID{}, err
	}
	rec, err := clusterRecordFrom(value)
	if err != nil {
		return 0, clusterID{}, fmt.Errorf("%w: snapshot cluster record: %w", ErrBadCommand, err)
	}
	return applied, rec.id, nil
}

// readSnapshotStream loads a stream into db (empty) in batches and returns
// its applied index. The stream comes from another node over the network,
// so every length is bounded and the checksum is verified before returning
// success; on error db holds a partial state the caller must discard.
func readSnapshotStream(r io.Reader, db *kv.DB) (uint64, error) {
	br := newCRCReader(r, 64<<10)
	applied, err := loadSnapshotStream(br, db)
	return applied, br.readFailure(err)
}

func loadSnapshotStream(br *crcReader, db *kv.DB) (uint64, error) {
	applied, err := readSnapshotPreamble(br)
	if err != nil {
		return 0, err
	}
	b := db.NewBatch()
	for n := 0; ; n++ {
		tag, err := br.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("%w: snapshot stream ends inside record %d", ErrBadCommand, n)
		}
		if tag == recordEnd {
			break
		}
		if tag != recordPair {
			return 0, fmt.Errorf("%w: snapshot record %d has tag %d", ErrBadCommand, n, tag)
		}
		key, err := readField(br, "key", n)
		if err != nil {
			return 0, err
		}
		if len(key) == 0 || (key[0] != userPrefix && key[0] != memberPrefix && key[0] != freshJoinPrefix && !bytes.Equal(key, clusterKey)) {
			return 0, fmt.Errorf("%w: snapshot record %d has key %q outside the state", ErrBadCommand, n, key)
		}
		value, err := readField(br, "value", n)
		if err != nil {
			return 0, err
		}
		if bytes.Equal(key, clusterKey) {
			if _, err := clusterRecordFrom(value); err != nil {
				return 0, fmt.Errorf("snapshot record %d: %w", n, err)
			}
		}
		b.Set(key, value)
		if b.Len() >= 1<<20 {
			if err := db.Apply(b, kv.NoSync); err != nil {
				return 0, err
			}
			b.Reset()
		}
	}
	want := br.crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(br.unsummed(), sum[:]); err != nil {
		return 0, fmt.Errorf("%w: snapshot stream lacks its checksum", ErrBadCommand)
	}
	if got := binary.LittleEndian.Uint32(sum[:]); got != want {
		return 0, fmt.Errorf("%w: snapshot checksum %08x, computed %08x", ErrBadCommand, got, want)
	}
	if _, err := io.ReadFull(br.unsummed(), sum[:1]); err != io.EOF {
		return 0, fmt.Errorf("%w: bytes after the snapshot checksum", ErrBadCommand)
	}
	if err := db.Apply(b, kv.NoSync); err != nil {
		return 0, err
	}
	return applied, nil
}

func readField(br *crcReader, what string, n int) ([]byte, error) {
	l, err := binary.ReadUvarint(br)
	if err != nil || l > maxSnapshotField {
		return nil, fmt.Errorf("%w: snapshot record %d: bad %s length", ErrBadCommand, n, what)
	}
	buf := make([]byte, l)
	if _, err := io.ReadFull(br, buf); err != nil {
		return nil, fmt.Errorf("%w: snapshot record %d: %s truncated", ErrBadCommand, n, what)
	}
	return buf, nil
}

// crcReader checksums what it reads, byte by byte or in blocks, and keeps
// the first read failure of the stream under it that is not its end.
type crcReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	// failed is that failure: a stream cut by the network or a disk
	// error is not a malformed one, and readFailure says which.
	failed error
}

func newCRCReader(r io.Reader, size int) *crcReader {
	c := &crcReader{crc: crc32.New(castagnoli)}
	c.r = bufio.NewReaderSize(failureRecorder{r, &c.failed}, size)
	return c
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc.Write(p[:n])
	return n, err
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.crc.Write([]byte{b})
	}
	return b, err
}

// unsummed reads on without checksumming: the checksum's own bytes.
func (c *crcReader) unsummed() io.Reader { return c.r }

// readFailure returns err, unless the stream under c failed to read: then
// that failure, so a snapshot cut by an I/O error is not reported as a
// malformed one (ErrBadCommand), which would blame its sender, nor as a
// head without a cluster record.
func (c *crcReader) readFailure(err error) error {
	if c.failed != nil {
		return fmt.Errorf("kvserver: reading the snapshot stream: %w", c.failed)
	}
	return err
}

// failureRecorder passes reads through and records the first error that
// is not io.EOF.
type failureRecorder struct {
	r      io.Reader
	failed *error
}

func (f failureRecorder) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF && *f.failed == nil {
		*f.failed = err
	}
	return n, err
}
