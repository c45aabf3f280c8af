package base

// ShortSeparator returns a short user key x with a <= x < b, for a < b,
// or a itself when no shorter one exists. Two users need one: a table's
// index entry between two data blocks (sstable), and the bound a table
// ends at inside a range deletion (kv), whose pieces on either side both
// hold it, so a long bound multiplies every split tombstone's bytes.
//
// With n the length of a and b's common prefix, it tries, shortest first:
// a's byte n plus one, when that stays below b's; b's first n+1 bytes,
// when b is longer (a proper prefix of b sorts before it, and after a at
// byte n); then a's first byte after n that is not 0xff, plus one. Keys
// that differ in a last digit and share a long tail of 0xff bytes thus
// still get an (n+1)-byte separator.
func ShortSeparator(a, b []byte) []byte {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if n >= len(a) || n >= len(b) {
		return a // one is a prefix of the other
	}
	if a[n] < 0xff && a[n]+1 < b[n] {
		return append(append([]byte(nil), a[:n]...), a[n]+1)
	}
	if len(b) > n+1 {
		return append([]byte(nil), b[:n+1]...)
	}
	for i := n + 1; i < len(a); i++ {
		if a[i] != 0xff {
			return append(append([]byte(nil), a[:i]...), a[i]+1)
		}
	}
	return a
}
