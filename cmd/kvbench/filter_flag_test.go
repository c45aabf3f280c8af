package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
)

// TestKVBenchFilterFlagHelp: -filter's help is kv's whole list of accepted
// filters (ribbon among them), not a list kept by hand.
func TestKVBenchFilterFlagHelp(t *testing.T) {
	var help bytes.Buffer
	parseFlags([]string{"-h"}, &help)
	want := "sievekv table filter: " + strings.Join(kv.FilterTypeNames(), ", ")
	if !strings.Contains(help.String(), want) || !strings.Contains(want, "ribbon") {
		t.Fatalf("help lacks %q:\n%s", want, help.String())
	}
}
