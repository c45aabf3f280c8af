package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
)

// TestFilterFlagListsEveryFilter: -filter's help names every filter kv
// accepts (it once omitted ribbon), each of them opens a database, and the
// older spellings still parse.
func TestFilterFlagListsEveryFilter(t *testing.T) {
	var help bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &help); err == nil {
		t.Fatal("-h parsed without ErrHelp")
	}
	for _, f := range kv.FilterTypes() {
		if !strings.Contains(help.String(), kv.FilterName(f)) {
			t.Errorf("-filter help lacks %s:\n%s", f, help.String())
		}
	}
	for _, name := range append(kv.FilterTypeNames(), "binaryfuse8", "blockedbloom", "xor8") {
		dir := filepath.Join(t.TempDir(), "db")
		if r := runShell(t, "", "-dir", dir, "-filter", name, "-c", "put a 1; flush; get a"); r.code != exitOK {
			t.Errorf("-filter %s: %+v", name, r)
		}
	}
}
