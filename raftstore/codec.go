package raftstore

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
)

// logFormatV1 is the first byte of every log entry value. One line per
// version; do not renumber: on disk.
//
//	1: type, term, AppendedAt, Data, Extensions (docs/format.md, "raftstore")
const logFormatV1 byte = 1

// AppendedAt presence flags. Do not renumber: on disk.
const (
	appendedAtZero byte = 0
	appendedAtSet  byte = 1
)

// encodeLog appends the value of l's entry to dst (the index is in the key,
// R1):
//
//	format (1) | type (1) | uvarint term | appendedAt flag (1)
//	[ varint unix seconds | uvarint nanoseconds ] (when the flag is 1)
//	uvarint len(data) | data | uvarint len(extensions) | extensions
func encodeLog(dst []byte, l *raft.Log) []byte {
	dst = append(dst, logFormatV1, byte(l.Type))
	dst = binary.AppendUvarint(dst, l.Term)
	if l.AppendedAt.IsZero() {
		dst = append(dst, appendedAtZero)
	} else {
		dst = append(dst, appendedAtSet)
		dst = binary.AppendVarint(dst, l.AppendedAt.Unix())
		dst = binary.AppendUvarint(dst, uint64(l.AppendedAt.Nanosecond()))
	}
	dst = binary.AppendUvarint(dst, uint64(len(l.Data)))
	dst = append(dst, l.Data...)
	dst = binary.AppendUvarint(dst, uint64(len(l.Extensions)))
	return append(dst, l.Extensions...)
}

// encodedLogLen is an upper bound of len(encodeLog(nil, l)).
func encodedLogLen(l *raft.Log) int {
	return 2 + 3*binary.MaxVarintLen64 + 1 + 4 + 2*binary.MaxVarintLen64 + len(l.Data) + len(l.Extensions)
}

// decodeLog fills l from the value b of the entry at index. b comes from
// disk, so every length is checked against what remains and any damage is
// an error wrapping kv.ErrCorruption; only the encoding encodeLog writes is
// accepted (minimal varints, nanoseconds below 1e9, no trailing bytes), so
// a value has exactly one encoding. l.Data and l.Extensions alias b.
func decodeLog(index uint64, b []byte, l *raft.Log) error {
	d := logDecoder{index: index, b: b}
	format := d.byte("format")
	if d.err == nil && format != logFormatV1 {
		d.fail("unknown format %d", format)
	}
	typ := d.byte("type")
	term := d.uvarint("term")
	var appendedAt time.Time
	switch flag := d.byte("appended-at flag"); {
	case d.err != nil:
	case flag == appendedAtSet:
		sec := d.varint("appended-at seconds")
		nsec := d.uvarint("appended-at nanoseconds")
		if d.err == nil && nsec >= uint64(time.Second) {
			d.fail("appended-at nanoseconds %d out of range", nsec)
		}
		appendedAt = time.Unix(sec, int64(nsec)).UTC()
		if d.err == nil && appendedAt.Unix() != sec {
			d.fail("appended-at seconds %d out of time.Time's range", sec)
		}
		if d.err == nil && appendedAt.IsZero() {
			// The zero instant has its own flag, so this form is not one
			// encodeLog writes.
			d.fail("appended-at set to the zero time")
		}
	case flag != appendedAtZero:
		d.fail("unknown appended-at flag %d", flag)
	}
	data := d.bytes("data")
	ext := d.bytes("extensions")
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return d.err
	}
	*l = raft.Log{
		Index:      index,
		Term:       term,
		Type:       raft.LogType(typ),
		Data:       data,
		Extensions: ext,
		AppendedAt: appendedAt,
	}
	return nil
}

// logDecoder reads one entry's value, remembering the first failure so the
// field reads can be written one after another.
type logDecoder struct {
	index uint64
	b     []byte
	err   error
}

func (d *logDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("raftstore: log entry %d: %w: %s", d.index, kv.ErrCorruption, fmt.Sprintf(format, args...))
	}
}

func (d *logDecoder) byte(what string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("truncated before the %s", what)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *logDecoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) {
		d.fail("bad %s varint", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint reads a signed varint. binary.PutVarint writes the zigzag form of
// v as a uvarint, so it is read as one (canonical, as uvarint requires) and
// unzigzagged here, the way binary.Varint does.
func (d *logDecoder) varint(what string) int64 {
	u := d.uvarint(what)
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// bytes reads a length-prefixed field; an empty field decodes as nil.
func (d *logDecoder) bytes(what string) []byte {
	n := d.uvarint(what + " length")
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("%s length %d exceeds the %d bytes left", what, n, len(d.b))
		return nil
	}
	if n == 0 {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}
