package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sievekv/sievekv/kv"
)

// checkTarget is what the check command needs to close the database,
// verify it with kv.Check (which wants it closed) and open it again with
// the same options. main sets it; without it the command is unavailable.
type checkTarget struct {
	dir  string
	opts kv.Options
}

// checkRecord is check's JSON line.
type checkRecord struct {
	Cmd      string   `json:"cmd"`
	OK       bool     `json:"ok"`
	Manifest string   `json:"manifest"`
	Tables   int      `json:"tables"`
	Entries  uint64   `json:"entries"`
	WALs     int      `json:"wals"`
	Problems []string `json:"problems"`
	Notes    []string `json:"notes"`
}

// errReopen ends the session: the DB could not be opened again after a
// check, so no further command has a database to work on.
var errReopen = errors.New("the database could not be reopened after the check")

func (in *Interp) cmdCheck(context.Context, []token) error {
	if in.check == nil {
		return fmt.Errorf("check is not available in this session")
	}
	if err := in.db.Close(); err != nil {
		return fmt.Errorf("closing for the check: %w", err)
	}
	rep, checkErr := kv.Check(in.check.dir, &kv.Options{FS: in.check.opts.FS})
	db, err := kv.Open(in.check.dir, &in.check.opts)
	if err != nil {
		in.db = nil
		return fmt.Errorf("%w: %v", errReopen, err)
	}
	in.db = db
	if checkErr != nil {
		return checkErr
	}
	if in.json {
		r := checkRecord{Cmd: "check", OK: rep.OK(), Manifest: rep.Manifest, Tables: rep.Tables,
			Entries: rep.Entries, WALs: rep.WALs, Problems: []string{}, Notes: rep.Notes}
		for _, p := range rep.Problems {
			r.Problems = append(r.Problems, p.Error())
		}
		if r.Notes == nil {
			r.Notes = []string{}
		}
		if err := in.emitJSON(r); err != nil {
			return err
		}
	} else {
		in.printf("%s\n", strings.TrimRight(rep.String(), "\n"))
	}
	return rep.Err()
}
