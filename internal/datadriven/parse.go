package datadriven

import (
	"fmt"
	"strings"
)

// parse splits a file into cases. trailer is the comment and blank lines
// after the last case, kept by -update.
func parse(name, src string) (cases []*TestData, trailer []string, err error) {
	lines := strings.Split(src, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1] // the file's final newline
	}
	var pending []string
	for i := 0; i < len(lines); {
		line := lines[i]
		if trimmed := strings.TrimSpace(line); trimmed == "" || strings.HasPrefix(trimmed, "#") {
			pending = append(pending, line)
			i++
			continue
		}
		d := &TestData{Pos: fmt.Sprintf("%s:%d", name, i+1), cmdLine: line, preamble: pending}
		pending = nil
		if d.Cmd, d.Args, err = parseCommand(line); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", d.Pos, err)
		}
		i++
		var input []string
		for ; i < len(lines) && lines[i] != "----"; i++ {
			input = append(input, lines[i])
		}
		if i == len(lines) {
			return nil, nil, fmt.Errorf("%s: no \"----\" after the command %q", d.Pos, line)
		}
		d.Input = strings.Join(input, "\n")
		i++ // "----"
		var expected strings.Builder
		for ; i < len(lines) && lines[i] != ""; i++ {
			expected.WriteString(lines[i] + "\n")
		}
		d.Expected = expected.String()
		cases = append(cases, d)
	}
	return cases, pending, nil
}

// parseCommand splits "cmd a k=v k=(v1, v2)" into the command and its
// arguments.
func parseCommand(line string) (string, []Arg, error) {
	fields, err := splitFields(line)
	if err != nil {
		return "", nil, err
	}
	var args []Arg
	for _, f := range fields[1:] {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			args = append(args, Arg{Key: f})
			continue
		}
		if strings.HasPrefix(val, "(") {
			if !strings.HasSuffix(val, ")") {
				return "", nil, fmt.Errorf("argument %q: unbalanced parentheses", f)
			}
			var vals []string
			for _, v := range strings.Split(val[1:len(val)-1], ",") {
				if v = strings.TrimSpace(v); v != "" {
					vals = append(vals, v)
				}
			}
			args = append(args, Arg{Key: key, Vals: vals})
			continue
		}
		args = append(args, Arg{Key: key, Vals: []string{val}})
	}
	return fields[0], args, nil
}

// splitFields splits on spaces outside parentheses.
func splitFields(line string) ([]string, error) {
	var fields []string
	var cur strings.Builder
	depth := 0
	for _, r := range line {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced parentheses in %q", line)
			}
		case (r == ' ' || r == '\t') && depth == 0:
			if cur.Len() > 0 {
				fields = append(fields, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced parentheses in %q", line)
	}
	if cur.Len() > 0 {
		fields = append(fields, cur.String())
	}
	return fields, nil
}
