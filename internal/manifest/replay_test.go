package manifest

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// recordList yields its records, then its end: io.EOF, or err if set.
type recordList struct {
	recs [][]byte
	err  error
}

func (l *recordList) Next() ([]byte, error) {
	if len(l.recs) == 0 {
		if l.err != nil {
			return nil, l.err
		}
		return nil, io.EOF
	}
	rec := l.recs[0]
	l.recs = l.recs[1:]
	return rec, nil
}

// TestReplayNamesTheBadRecordAndKeepsTheFoldOnReadErrors: a record that
// does not decode fails the replay as corruption naming it (counted from
// 1); a record that does not fold likewise; a read error comes back as it
// came, with the fold and count of the records before it, which Apply
// turns into their version.
func TestReplayNamesTheBadRecordAndKeepsTheFoldOnReadErrors(t *testing.T) {
	first := (&VersionEdit{LogNumber: 3, HasLogNumber: true, NextFileNumber: 4, HasNextFileNumber: true}).Encode()
	deletesMissing := (&VersionEdit{DeletedTables: []DeletedTable{{Level: 1, FileNum: 9}}}).Encode()

	_, n, err := Replay(&recordList{recs: [][]byte{first, {0xff}}})
	if !errors.Is(err, ErrCorruption) || !strings.HasPrefix(err.Error(), "record 2: ") || n != 1 {
		t.Fatalf("undecodable record: n %d, err %v", n, err)
	}
	_, n, err = Replay(&recordList{recs: [][]byte{first, deletesMissing}})
	if !errors.Is(err, ErrCorruption) || !strings.HasPrefix(err.Error(), "record 2: ") || n != 1 {
		t.Fatalf("unfoldable record: n %d, err %v", n, err)
	}
	torn := errors.New("torn")
	fold, n, err := Replay(&recordList{recs: [][]byte{first}, err: torn})
	if err != torn || n != 1 {
		t.Fatalf("read error: n %d, err %v", n, err)
	}
	s, err := fold.Apply()
	if err != nil || s.LogNumber != 3 || s.NextFileNumber != 4 {
		t.Fatalf("fold before the read error: %+v, %v", s, err)
	}
	if _, n, err := Replay(&recordList{}); err != nil || n != 0 {
		t.Fatalf("empty: n %d, err %v", n, err)
	}
}
