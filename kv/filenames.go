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

// parseFileName is the inverse of fileName; ok is false for files that are
// not the DB's.
func parseFileName(name string) (kind fileKind, num fileNum, ok bool) {
	switch name {
	case "CURRENT":
		return fileKindCurrent, 0, true
	case "LOCK":
		return fileKindLock, 0, true
	}
	if rest, found := strings.CutPrefix(name, "MANIFEST-"); found {
		n, err := strconv.ParseUint(rest, 10, 64)
		return fileKindManifest, fileNum(n), err == nil
	}
	stem, ext, found := strings.Cut(name, ".")
	if !found {
		return fileKindUnknown, 0, false
	}
	n, err := strconv.ParseUint(stem, 10, 64)
	if err != nil {
		return fileKindUnknown, 0, false
	}
	switch ext {
	case "log":
		return fileKindLog, fileNum(n), true
	case "sst":
		return fileKindTable, fileNum(n), true
	case "tmp":
		return fileKindTemp, fileNum(n), true
	}
	return fileKindUnknown, 0, false
}
