package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
)

// TestKVBenchFilterFlagHelp: -filter's help names every filter kv accepts,
// from kv's vocabulary rather than a list kept by hand.
func TestKVBenchFilterFlagHelp(t *testing.T) {
	var help bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &help); err == nil {
		t.Fatal("-h parsed without ErrHelp")
	}
	for _, f := range kv.FilterTypes() {
		if !strings.Contains(help.String(), f.String()) {
			t.Errorf("-filter help lacks %s:\n%s", f, help.String())
		}
	}
}
