package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestGuideCoversFlagsAndCommands checks docs/kvshell.md against the
// shell: every flag -h lists has a row in the guide's flag table, the
// defaults of -dir and -filter are the ones the guide names, and every
// command and alias of commandTable is in its command table. It reads
// names, not prose, so rewording the guide does not break it.
func TestGuideCoversFlagsAndCommands(t *testing.T) {
	b, err := os.ReadFile("../../docs/kvshell.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)

	var help strings.Builder
	if _, err := parseFlags([]string{"-h"}, &help); err == nil {
		t.Fatal("-h parsed without ErrHelp")
	}
	flags := regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(help.String(), -1)
	if len(flags) < 5 {
		t.Fatalf("found %d flags in -h:\n%s", len(flags), help.String())
	}
	for _, f := range flags {
		if !strings.Contains(guide, "| `-"+f[1]) {
			t.Errorf("flag -%s has no row in docs/kvshell.md", f[1])
		}
	}
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(guide, "default `"+cfg.dir+"`") {
		t.Errorf("docs/kvshell.md does not give -dir's default %s", cfg.dir)
	}
	if !strings.Contains(guide, "`"+cfg.filter+"` (default)") {
		t.Errorf("docs/kvshell.md does not give -filter's default %s", cfg.filter)
	}

	for _, c := range commandTable {
		if !strings.Contains(guide, "| `"+c.name) {
			t.Errorf("command %s has no row in docs/kvshell.md", c.name)
		}
		for _, a := range c.aliases {
			if !strings.Contains(guide, "alias `"+a+"`") {
				t.Errorf("alias %s of %s is not in docs/kvshell.md", a, c.name)
			}
		}
	}
}
