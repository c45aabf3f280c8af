package tests

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docs/format.md explains each encoding with a worked example: a hex dump
// annotated field by field. The golden tests pin the encoders' bytes, but
// nothing pinned the dumps, and two of them had drifted a slot from the
// bytes they describe (a review found them, 2026-12-06). Each example
// that dumps a whole golden file is marked `<!-- golden: path -->` just
// before its code block; this test reads the block back into bytes and
// requires them to be the file's.
//
// The dump grammar: each line contributes its leading hex tokens (any
// even number of hex digits; spaces inside the run are layout), up to the
// first token that is not hex, where the annotation starts; `X × N`
// stands for the token X written N times, for runs of zero bytes.

var goldenMarker = regexp.MustCompile(`^<!-- golden: (\S+) -->$`)

// minGoldenExamples is how many marked examples format.md has: fewer
// means a marker was lost (and its example went unchecked).
const minGoldenExamples = 14

func TestFormatDocExamplesMatchGoldenFiles(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "format.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	checked := 0
	for i, line := range lines {
		m := goldenMarker.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		block, err := codeBlockAfter(lines, i+1)
		if err != nil {
			t.Errorf("format.md:%d: %v", i+1, err)
			continue
		}
		got, err := dumpBytes(block)
		if err != nil {
			t.Errorf("format.md:%d (%s): %v", i+1, m[1], err)
			continue
		}
		want := readGoldenHex(t, filepath.Join(root, m[1]))
		if !bytes.Equal(got, want) {
			t.Errorf("format.md:%d: the example's %d bytes differ from %s's %d at byte %d\n doc:    %x\n golden: %x",
				i+1, len(got), m[1], len(want), firstDifference(got, want), got, want)
		}
		checked++
	}
	if checked < minGoldenExamples {
		t.Errorf("checked %d marked examples, want at least %d: a golden marker was dropped", checked, minGoldenExamples)
	}
}

// codeBlockAfter returns the lines of the fenced or indented code block
// that starts at lines[from], blank lines before it skipped.
func codeBlockAfter(lines []string, from int) ([]string, error) {
	for from < len(lines) && strings.TrimSpace(lines[from]) == "" {
		from++
	}
	if from == len(lines) {
		return nil, errNoBlock
	}
	if strings.HasPrefix(lines[from], "```") {
		for end := from + 1; end < len(lines); end++ {
			if strings.HasPrefix(lines[end], "```") {
				return lines[from+1 : end], nil
			}
		}
		return nil, errNoBlock
	}
	var out []string
	for ; from < len(lines) && (strings.HasPrefix(lines[from], "    ") || strings.TrimSpace(lines[from]) == ""); from++ {
		out = append(out, lines[from])
	}
	if len(out) == 0 {
		return nil, errNoBlock
	}
	return out, nil
}

type docError string

func (e docError) Error() string { return string(e) }

const errNoBlock = docError("no code block follows the golden marker")

var hexToken = regexp.MustCompile(`^(?:[0-9a-fA-F]{2})+$`)

// dumpBytes reads a worked example's bytes (the grammar above).
func dumpBytes(block []string) ([]byte, error) {
	var out []byte
	for _, line := range block {
		fields := strings.Fields(line)
		var last []byte
		for j := 0; j < len(fields); j++ {
			f := fields[j]
			if f == "×" && last != nil && j+1 < len(fields) {
				n, err := strconv.Atoi(fields[j+1])
				if err != nil || n < 1 {
					return nil, docError("bad repeat count in " + strconv.Quote(line))
				}
				for range n - 1 {
					out = append(out, last...)
				}
				last = nil
				j++
				continue
			}
			if !hexToken.MatchString(f) {
				break
			}
			last, _ = hex.DecodeString(f)
			out = append(out, last...)
		}
	}
	return out, nil
}

// readGoldenHex reads a golden file's first line, the hex of its bytes
// (later lines, where present, are notes).
func readGoldenHex(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		t.Fatalf("%s: empty", path)
	}
	b, err := hex.DecodeString(strings.TrimSpace(sc.Text()))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestDumpBytesGrammar pins the reader the example test relies on, so a
// grammar bug cannot make every example agree with its file.
func TestDumpBytesGrammar(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{`53 56 4b 46 01   "SVKF", type 1`}, "53564b4601"},
		{[]string{`53564b46 0b 01 0000    magic`, `    6600   body length 102`}, "53564b460b0100006600"},
		{[]string{`00 00 20 00   00 01  words 0-1`}, "000020000001"},
		{[]string{`9b 5b 00 × 3        tags`}, "9b5b000000"},
		{[]string{`0000 × 2   words`, `block 0:`, `  ff   offset`}, "00000000ff"},
		{[]string{`set bits: 53 152`, `ab cd   the 2 bytes`}, "abcd"},
		{[]string{`12 3f  CRC32C = 0xe0023f12`}, "123f"},
	} {
		got, err := dumpBytes(c.lines)
		if err != nil || hex.EncodeToString(got) != c.want {
			t.Errorf("dumpBytes(%q) = %x, %v; want %s", c.lines, got, err, c.want)
		}
	}
	if _, err := dumpBytes([]string{"00 × x"}); err == nil {
		t.Error("a repeat count that is not a number was accepted")
	}
}
