package tests

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
)

// The docs cite tests by name as the proof of what they claim, Go files
// by path, and the API's options and metrics by field. A rename or a
// consolidation that leaves a citation behind turns a proof into a dead
// reference a reader cannot follow, and nothing else notices: these
// tests do.

// docFiles returns the repository's prose: README.md, docs/*.md and every
// package's doc.go, as paths relative to the repository root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if e.IsDir() {
			if strings.HasPrefix(e.Name(), ".") && rel != "." || e.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "README.md" || filepath.Dir(rel) == "docs" && strings.HasSuffix(rel, ".md") || e.Name() == "doc.go" {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d doc files under %s: %v", len(out), root, out)
	}
	return out
}

// repoRoot is the module's root: tests/ sits directly below it.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod above tests/: %v", err)
	}
	return root
}

var (
	testFuncDecl = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Z0-9_][A-Za-z0-9_]*)\(`)
	testFuncRef  = regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z0-9_][A-Za-z0-9_]*`)
	// A name on a line that runs go test with a pattern may be a prefix
	// of the tests the pattern selects (-run 'TestMonkey|TestBudget').
	patternLine = regexp.MustCompile(`-(?:test\.)?(?:run|bench|fuzz)\b`)
	goFileRef   = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.go)`")
	// The qualifier, if any, must be kv: compaction.Options is another type.
	apiFieldRef = regexp.MustCompile(`(?:\b([a-z][a-z0-9]*)\.)?\b(Options|IterOptions|WriteOptions|Metrics|GetTrace|TableInfo|CheckReport)((?:\.[A-Z][A-Za-z0-9]*)+)`)
)

// testFuncs returns the name of every test, benchmark and fuzz target in
// the module.
func testFuncs(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if strings.HasPrefix(e.Name(), ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range testFuncDecl.FindAllSubmatch(src, -1) {
			names[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// eachDocLine calls fn with every line of every doc file and its place.
func eachDocLine(t *testing.T, root string, fn func(doc string, line int, text string)) {
	t.Helper()
	for _, doc := range docFiles(t, root) {
		f, err := os.Open(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			fn(doc, n, sc.Text())
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
	}
}

// TestDocsCiteTestsThatExist: every Test, Benchmark and Fuzz name the docs
// cite is a function of some _test.go file; on a line that runs go test
// with a pattern, a prefix of one.
func TestDocsCiteTestsThatExist(t *testing.T) {
	root := repoRoot(t)
	names := testFuncs(t, root)
	if len(names) < 100 {
		t.Fatalf("found only %d test functions under %s", len(names), root)
	}
	cited := 0
	eachDocLine(t, root, func(doc string, line int, text string) {
		prefixOK := patternLine.MatchString(text)
		for _, ref := range testFuncRef.FindAllString(text, -1) {
			cited++
			if names[ref] || prefixOK && anyHasPrefix(names, ref) {
				continue
			}
			t.Errorf("%s:%d cites %s, which no _test.go file defines", doc, line, ref)
		}
	})
	if cited < 100 {
		t.Errorf("the docs cite only %d tests: is the reference pattern still right?", cited)
	}
}

func anyHasPrefix(names map[string]bool, prefix string) bool {
	for n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// TestDocsCiteFilesThatExist: every Go file the docs cite in backquotes
// exists: a path relative to the repository root or to the citing file's
// directory, and a bare name (docs/ name a package's files by it where the
// text says which package) as some package's file.
func TestDocsCiteFilesThatExist(t *testing.T) {
	root := repoRoot(t)
	baseNames := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (strings.HasPrefix(e.Name(), ".") && p != root || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			baseNames[e.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cited := 0
	eachDocLine(t, root, func(doc string, line int, text string) {
		for _, m := range goFileRef.FindAllStringSubmatch(text, -1) {
			cited++
			ref := m[1]
			if exists(filepath.Join(root, ref)) || exists(filepath.Join(root, filepath.Dir(doc), ref)) ||
				!strings.Contains(ref, "/") && baseNames[ref] {
				continue
			}
			t.Errorf("%s:%d cites %s, which does not exist", doc, line, ref)
		}
	})
	if cited < 20 {
		t.Errorf("the docs cite only %d Go files: is the reference pattern still right?", cited)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestDocsCiteAPIFieldsThatExist: every Options.X, Metrics.X.Y (and the
// like) the docs cite is a field or method of kv's type.
func TestDocsCiteAPIFieldsThatExist(t *testing.T) {
	root := repoRoot(t)
	types := map[string]reflect.Type{
		"Options":      reflect.TypeOf(kv.Options{}),
		"IterOptions":  reflect.TypeOf(kv.IterOptions{}),
		"WriteOptions": reflect.TypeOf(kv.WriteOptions{}),
		"Metrics":      reflect.TypeOf(kv.Metrics{}),
		"GetTrace":     reflect.TypeOf(kv.GetTrace{}),
		"TableInfo":    reflect.TypeOf(kv.TableInfo{}),
		"CheckReport":  reflect.TypeOf(kv.CheckReport{}),
	}
	cited := 0
	eachDocLine(t, root, func(doc string, line int, text string) {
		for _, m := range apiFieldRef.FindAllStringSubmatch(text, -1) {
			if m[1] != "" && m[1] != "kv" {
				continue
			}
			cited++
			if err := resolvePath(types[m[2]], strings.Split(m[3][1:], ".")); err != "" {
				t.Errorf("%s:%d cites %s%s: %s", doc, line, m[2], m[3], err)
			}
		}
	})
	if cited < 10 {
		t.Errorf("the docs cite only %d API fields: is the reference pattern still right?", cited)
	}
}

// resolvePath follows path through typ's fields (and, at the last step,
// its methods), returning what failed, or "" if the path resolves.
func resolvePath(typ reflect.Type, path []string) string {
	for i, name := range path {
		if _, ok := reflect.PointerTo(typ).MethodByName(name); ok && i == len(path)-1 {
			return ""
		}
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct {
			return typ.String() + " has no field " + name
		}
		f, ok := typ.FieldByName(name)
		if !ok {
			return typ.String() + " has no field or method " + name
		}
		typ = f.Type
	}
	return ""
}
