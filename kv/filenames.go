package kv

import (
	"fmt"
	"strconv"
	"strings"
)

// fileKind classifies the files in a DB directory.
type fileKind int

const (
	fileKindUnknown  fileKind = iota
	fileKindLog               // NNNNNN.log: a write-ahead log
	fileKindTable             // NNNNNN.sst: a sorted table
	fileKindManifest          // MANIFEST-NNNNNN: the version edit log
	fileKindCurrent           // CURRENT: names the live MANIFEST
	fileKindLock              // LOCK: held while a DB is open
	fileKindTemp              // NNNNNN.tmp: CURRENT being replaced
)

// fileNum numbers WALs, tables and manifests from one counter, so a number
// names exactly one file.
type fileNum uint64

func fileName(kind fileKind, num fileNum) string {
	switch kind {
	case fileKindLog:
		return fmt.Sprintf("%06d.log", num)
	case fileKindTable:
		return fmt.Sprintf("%06d.sst", num)
	case fileKindManifest:
		return fmt.Sprintf("MANIFEST-%06d", num)
	case fileKindCurrent:
		return "CURRENT"
	case fileKindLock:
		return "LOCK"
	case fileKindTemp:
		return fmt.Sprintf("%06d.tmp", num)
	}
	panic(fmt.Sprintf("kv: fileName of unknown kind %d", kind))
}

// maxFileNum is the largest file number the engine allocates. It keeps
// every number far from the uint64 wrap, and sets the range of names that
// are the engine's: a name whose number is past it was not written by the
// engine, whatever its shape (docs/reliability.md, "Files in the directory").
// At a million files a second it lasts over eight years.
const maxFileNum fileNum = 1<<48 - 1

// parseFileName is the exact inverse of fileName: ok is true only for a
// name fileName produces, with a number the engine could have allocated
// (1 to maxFileNum; 0 means "none" and names no file). "5000.log", "0000001.log" and
// "18446744073709551613.tmp" are not the engine's, and Open leaves such
// files alone: it neither deletes them nor lets their numbers move its
// counters.
func parseFileName(name string) (kind fileKind, num fileNum, ok bool) {
	switch name {
	case "CURRENT":
		return fileKindCurrent, 0, true
	case "LOCK":
		return fileKindLock, 0, true
	}
	var digits string
	if rest, found := strings.CutPrefix(name, "MANIFEST-"); found {
		kind, digits = fileKindManifest, rest
	} else {
		stem, ext, found := strings.Cut(name, ".")
		if !found {
			return fileKindUnknown, 0, false
		}
		switch ext {
		case "log":
			kind = fileKindLog
		case "sst":
			kind = fileKindTable
		case "tmp":
			kind = fileKindTemp
		default:
			return fileKindUnknown, 0, false
		}
		digits = stem
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n == 0 || fileNum(n) > maxFileNum {
		return fileKindUnknown, 0, false
	}
	// ParseUint accepts any padding; the engine writes exactly one.
	if fileName(kind, fileNum(n)) != name {
		return fileKindUnknown, 0, false
	}
	return kind, fileNum(n), true
}
