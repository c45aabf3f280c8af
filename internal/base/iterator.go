package base

// InternalIterator is the cursor every sorted source of internal keys offers
// (memtable, table, and the engine's merging iterator), so the engine can
// stack them. Keys come in the order of Compare (B1).
//
// Positioning methods return whether the iterator is now on an entry; after
// false, Valid is false and Error tells exhaustion (nil) from failure.
// Key and Value are valid only until the next positioning call; the caller
// copies what it keeps and never modifies them. Bounds, where an
// implementation supports them, are on user keys: lower inclusive, upper
// exclusive; an iterator never yields an entry outside them.
type InternalIterator interface {
	// SeekGE moves to the first entry >= key.
	SeekGE(key InternalKey) bool
	// SeekLT moves to the last entry < key.
	SeekLT(key InternalKey) bool
	// First moves to the first entry.
	First() bool
	// Last moves to the last entry.
	Last() bool
	// Next moves one entry forward. On an unpositioned or exhausted
	// iterator the result is false.
	Next() bool
	// Prev moves one entry backward. On an unpositioned or exhausted
	// iterator the result is false.
	Prev() bool
	// Valid reports whether the iterator is on an entry.
	Valid() bool
	// Key returns the current entry's key.
	Key() InternalKey
	// Value returns the current entry's value.
	Value() []byte
	// Error returns the first error met, which is sticky.
	Error() error
	// Close releases the iterator and returns Error.
	Close() error
}
