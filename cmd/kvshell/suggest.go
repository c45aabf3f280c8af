package main

import (
	"strings"
	"unicode/utf8"
)

// suggest returns the command name closest to a mistyped one, or "" when
// nothing is close enough to be a likely typo. Close means: a unique
// command that the input is a prefix of ("comp" -> "compact"), or an
// optimal-string-alignment distance of at most 2 that is also less than
// half the input's length, so "x" suggests nothing rather than "del".
func suggest(input string) string {
	if input == "" || utf8.RuneCountInString(input) > maxSuggestInput() {
		// Longer than every name by more than 2 runes: no name is at
		// distance 2 or less (an edit changes the length by at most one
		// rune), and the distance table would be as long as the input (a
		// pasted value, megabytes).
		return ""
	}
	input = strings.ToLower(input)
	var prefixed []string
	for _, n := range commandNames() {
		if strings.HasPrefix(n, input) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	best, bestD := "", 3
	for _, n := range commandNames() {
		// The first name at the smallest distance wins: the table's
		// order (common commands first) breaks ties.
		if d := osaDistance(input, n); d < bestD && 2*d <= len(input) {
			best, bestD = n, d
		}
	}
	return best
}

// maxSuggestInput is the longest input, in runes, suggest considers: the
// longest command name plus the 2 edits a suggestion may be away. (A
// function, not a package variable: the command table is built by init,
// after package variables.)
func maxSuggestInput() int {
	n := 0
	for _, name := range commandNames() {
		n = max(n, len(name))
	}
	return n + 2
}

// osaDistance is the optimal string alignment distance (Levenshtein plus
// transposition of adjacent characters, each edit costing 1), because the
// commonest typo in a command name is two swapped letters ("gte").
func osaDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
