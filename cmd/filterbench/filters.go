package main

// The filters filterbench measures: every filter in sievekv's filters/ and
// the anchor libraries. The anchors (FastFilter/xorfilter,
// bits-and-blooms/bloom/v3, seiflotfy/cuckoofilter) are dependencies of this
// benchmark program only; the project rule keeps them out of library code.

import (
	"fmt"

	"github.com/FastFilter/xorfilter"
	bbloom "github.com/bits-and-blooms/bloom/v3"
	cuckoo "github.com/seiflotfy/cuckoofilter"

	"github.com/sievekv/sievekv/filters"
)

// querier is one built filter, queried through a method value of its
// concrete type: key for the filters that take the key's bytes, hash for
// the static filters and xorfilter (the key's 64-bit hash is their natural
// input). A method value is bound where the filter's type is known, so a
// query is one indirect call and then the filter's own method, the same
// for sievekv's filters and the anchors'. (A generic wrapper would not do:
// its call through a type parameter is a second indirect call.)
type querier struct {
	key  func(key []byte) bool // nil for a filter queried by hash
	hash func(h uint64) bool   // nil for a filter queried by key
	// remove deletes a present key; nil for a filter without deletion.
	remove func(key []byte) bool
	// bytes is the filter's size: the checksummed encoding for sievekv's.
	bytes func() int
}

// hits counts the keys the filter reports present, each asked by the
// input the filter takes (hs[i] is the hash of keys[i]).
func (q querier) hits(keys [][]byte, hs []uint64) int {
	n := 0
	if q.hash != nil {
		for _, h := range hs {
			if q.hash(h) {
				n++
			}
		}
		return n
	}
	for _, k := range keys {
		if q.key(k) {
			n++
		}
	}
	return n
}

// byKey and byHash are the queriers of sievekv's filters, given the
// filter's own method value and sized by their encoding.
func byKey(f encoder, query func(key []byte) bool) querier {
	return querier{key: query, bytes: func() int { return encodedSize(f) }}
}

func byHash(f encoder, query func(h uint64) bool) querier {
	return querier{hash: query, bytes: func() int { return encodedSize(f) }}
}

// withRemove adds deletion to q.
func (q querier) withRemove(remove func(key []byte) bool) querier {
	q.remove = remove
	return q
}

// spec is one filter configuration.
type spec struct {
	name string // e.g. "sievekv/bloom"
	lib  string // "sievekv" or the anchor's import path
	// target is the configured false-positive rate (0: fixed by design).
	target float64
	// input is "hash" or "key": what query receives.
	input string
	build builder
}

func (s spec) label() string {
	if s.target == 0 {
		return s.name
	}
	return fmt.Sprintf("%s@%g", s.name, s.target)
}

// Anchor names: the import paths shortened.
const (
	libSieve  = "sievekv"
	libXor    = "FastFilter/xorfilter"
	libBloom  = "bits-and-blooms/bloom/v3"
	libCuckoo = "seiflotfy/cuckoofilter"
)

// tunableTargets is the sweep of target FP rates for the filters sized by
// one. cuckooTargets stops at 1e-3 since NewCuckoo rejects rates below
// 8/2^16; it starts at 0.032, the largest rate whose fingerprints NewCuckoo
// makes 8 bits wide (ceil(log2(8/0.032)) = 8), as seiflotfy's fixed ones.
var (
	tunableTargets = []float64{0.01, 0.001, 0.0001}
	cuckooTargets  = []float64{0.032, 0.01, 0.001}
)

func specs() []spec {
	var out []spec
	for _, t := range tunableTargets {
		t := t
		out = append(out,
			spec{"sievekv/bloom", libSieve, t, "key", fromKeys(func(n int) (*filters.Bloom, error) { return filters.NewBloom(n, t) },
				func(f *filters.Bloom) querier { return byKey(f, f.MayContain) })},
			spec{"sievekv/blocked-bloom", libSieve, t, "key", fromKeys(func(n int) (*filters.BlockedBloom, error) { return filters.NewBlockedBloom(n, t) },
				func(f *filters.BlockedBloom) querier { return byKey(f, f.MayContain) })},
			spec{"sievekv/counting-bloom", libSieve, t, "key", fromKeys(func(n int) (*filters.CountingBloom, error) { return filters.NewCountingBloom(n, t) },
				func(f *filters.CountingBloom) querier {
					return byKey(f, f.MayContain).withRemove(func(k []byte) bool { return f.Remove(k) == nil })
				})},
			// The scalable filter starts at a quarter of n so that it
			// really grows (three stages at n).
			spec{"sievekv/scalable-bloom", libSieve, t, "key", fromKeys(func(n int) (*filters.ScalableBloom, error) { return filters.NewScalableBloom(max(n/4, 1), t) },
				func(f *filters.ScalableBloom) querier { return byKey(f, f.MayContain) })},
			spec{"sievekv/quotient", libSieve, t, "key", fromKeysChecked(func(n int) (*filters.Quotient, error) { return filters.NewQuotient(n, t) },
				func(f *filters.Quotient) querier { return byKey(f, f.MayContain).withRemove(f.Remove) })},
			spec{"bloom/v3", libBloom, t, "key", func(keys [][]byte, _ []uint64) (querier, error) {
				f := bbloom.NewWithEstimates(uint(len(keys)), t)
				for _, k := range keys {
					f.Add(k)
				}
				return querier{key: f.Test, bytes: func() int { return int(f.Cap() / 8) }}, nil
			}},
		)
	}
	for _, t := range cuckooTargets {
		t := t
		out = append(out, spec{"sievekv/cuckoo", libSieve, t, "key", fromKeysChecked(func(n int) (*filters.Cuckoo, error) { return filters.NewCuckoo(n, t) },
			func(f *filters.Cuckoo) querier { return byKey(f, f.MayContain).withRemove(f.Remove) })})
	}
	out = append(out,
		// seiflotfy sizes its table at capacity/4 buckets rounded up to a
		// power of two, with no load margin: when n is just under a
		// power of two the table is ~97% full and inserts fail. A user
		// then doubles the capacity; so does this builder (the time
		// counts).
		spec{"cuckoofilter", libCuckoo, 0, "key", func(keys [][]byte, _ []uint64) (querier, error) {
			for capacity := uint(len(keys)); ; capacity *= 2 {
				f := cuckoo.NewFilter(capacity)
				ok := true
				for _, k := range keys {
					if !f.Insert(k) {
						ok = false
						break
					}
				}
				if ok {
					return querier{key: f.Lookup, remove: f.Delete, bytes: func() int { return len(f.Encode()) }}, nil
				}
				if capacity > 8*uint(len(keys)) {
					return querier{}, fmt.Errorf("seiflotfy/cuckoofilter: inserts fail at capacity %d", capacity)
				}
			}
		}},
		spec{"sievekv/xor8", libSieve, 0, "hash", fromHashes(filters.BuildXor8FromHashes, func(f *filters.Xor8) querier { return byHash(f, f.MayContainHash) })},
		spec{"sievekv/binary-fuse8", libSieve, 0, "hash", fromHashes(filters.BuildBinaryFuse8FromHashes, func(f *filters.BinaryFuse8) querier { return byHash(f, f.MayContainHash) })},
		spec{"sievekv/binary-fuse16", libSieve, 0, "hash", fromHashes(filters.BuildBinaryFuse16FromHashes, func(f *filters.BinaryFuse16) querier { return byHash(f, f.MayContainHash) })},
		spec{"xorfilter/xor8", libXor, 0, "hash", fromHashes(xorfilter.Populate, func(f *xorfilter.Xor8) querier {
			return querier{hash: f.Contains, bytes: func() int { return len(f.Fingerprints) }}
		})},
		spec{"xorfilter/binary-fuse8", libXor, 0, "hash", fromHashes(xorfilter.PopulateBinaryFuse8, func(f *xorfilter.BinaryFuse8) querier {
			return querier{hash: f.Contains, bytes: func() int { return len(f.Fingerprints) }}
		})},
		spec{"xorfilter/binary-fuse16", libXor, 0, "hash", fromHashes(xorfilter.NewBinaryFuse[uint16], func(f *xorfilter.BinaryFuse[uint16]) querier {
			return querier{hash: f.Contains, bytes: func() int { return 2 * len(f.Fingerprints) }}
		})},
	)
	// The general binary fuse filter at the widths the fixed ones lack,
	// and at 8 bits to compare with its specialised sibling.
	for _, bits := range []int{4, 6, 8, 10, 12} {
		o := filters.FuseOptions{Arity: 4, FingerprintBits: bits}
		out = append(out, spec{fmt.Sprintf("sievekv/binary-fuse-a4-%d", bits), libSieve, 0, "hash",
			fromHashes(func(hs []uint64) (*filters.BinaryFuse, error) { return filters.BuildBinaryFuseFromHashes(hs, o) },
				func(f *filters.BinaryFuse) querier { return byHash(f, f.MayContainHash) })})
	}
	// Ribbon at 7 (the sstable default), 8 and 10 result bits, the widths
	// docs/filters.md ("Ribbon filter") compares with binary fuse.
	for _, bits := range []int{7, 8, 10} {
		o := filters.RibbonOptions{ResultBits: bits}
		out = append(out, spec{fmt.Sprintf("sievekv/ribbon-%d", bits), libSieve, 0, "hash",
			fromHashes(func(hs []uint64) (*filters.Ribbon, error) { return filters.BuildRibbonFromHashes(hs, o) },
				func(f *filters.Ribbon) querier { return byHash(f, f.MayContainHash) })})
	}
	// The quotient and cuckoo descendants, at the cuckoo filter's rates
	// (vacuum, like cuckoo, has at most 16-bit fingerprints).
	for _, t := range cuckooTargets {
		t := t
		newDyn := map[string]func(n int) (dynamicFilter, error){
			"counting-quotient": func(n int) (dynamicFilter, error) { return filters.NewCountingQuotient(n, t) },
			"vector-quotient":   func(n int) (dynamicFilter, error) { return filters.NewVectorQuotient(n, t) },
			"morton":            func(n int) (dynamicFilter, error) { return filters.NewMorton(n, t) },
			"vacuum":            func(n int) (dynamicFilter, error) { return filters.NewVacuum(n, t) },
		}
		for _, name := range []string{"counting-quotient", "vector-quotient", "morton", "vacuum"} {
			out = append(out, spec{"sievekv/" + name, libSieve, t, "key", fromKeysChecked(newDyn[name], func(f dynamicFilter) querier { return byKey(f, f.MayContain).withRemove(f.Remove) })})
		}
	}
	return out
}

// builder is a spec's build function.
type builder = func(keys [][]byte, hashes []uint64) (querier, error)

// fromKeys is the builder of a filter whose Add cannot fail: fresh sizes
// it for the keys, every key is added, and wrap makes it a querier.
func fromKeys[F interface{ Add(key []byte) }](fresh func(n int) (F, error), wrap func(F) querier) builder {
	return func(keys [][]byte, _ []uint64) (querier, error) {
		f, err := fresh(len(keys))
		if err != nil {
			return querier{}, err
		}
		for _, k := range keys {
			f.Add(k)
		}
		return wrap(f), nil
	}
}

// fromKeysChecked is fromKeys for a filter whose Add can fail (a full
// table): the first failure fails the build.
func fromKeysChecked[F interface{ Add(key []byte) error }](fresh func(n int) (F, error), wrap func(F) querier) builder {
	return func(keys [][]byte, _ []uint64) (querier, error) {
		f, err := fresh(len(keys))
		if err != nil {
			return querier{}, err
		}
		for _, k := range keys {
			if err := f.Add(k); err != nil {
				return querier{}, err
			}
		}
		return wrap(f), nil
	}
}

// fromHashes is the builder of a static filter, built at once from the
// keys' hashes.
func fromHashes[F any](build func(hashes []uint64) (F, error), wrap func(F) querier) builder {
	return func(_ [][]byte, hs []uint64) (querier, error) {
		f, err := build(hs)
		if err != nil {
			return querier{}, err
		}
		return wrap(f), nil
	}
}

// dynamicFilter is what the newer dynamic filters share; they are held
// through it (a query then costs a second indirect call, the same for
// each, so they compare fairly with one another).
type dynamicFilter interface {
	Add([]byte) error
	Remove([]byte) bool
	MayContain([]byte) bool
	MarshalBinary() ([]byte, error)
}

// encoder is what every sievekv filter offers to be sized by.
type encoder interface{ MarshalBinary() ([]byte, error) }

// encodedSize is a sievekv filter's size: its checksummed encoding.
func encodedSize(f encoder) int {
	b, err := f.MarshalBinary()
	if err != nil {
		return -1
	}
	return len(b)
}

// anchorPairs name each sievekv filter's anchor for the speed goal: the
// same design where the anchor has one, else the closest (a plain Bloom for
// the Bloom variants, a cuckoo filter for the quotient filter).
var anchorPairs = []struct{ ours, anchor string }{
	{"sievekv/bloom@0.01", "bloom/v3@0.01"},
	{"sievekv/blocked-bloom@0.01", "bloom/v3@0.01"},
	{"sievekv/counting-bloom@0.01", "bloom/v3@0.01"},
	{"sievekv/scalable-bloom@0.01", "bloom/v3@0.01"},
	{"sievekv/xor8", "xorfilter/xor8"},
	{"sievekv/binary-fuse8", "xorfilter/binary-fuse8"},
	{"sievekv/binary-fuse-a4-8", "xorfilter/binary-fuse8"},
	{"sievekv/binary-fuse16", "xorfilter/binary-fuse16"},
	{"sievekv/cuckoo@0.032", "cuckoofilter"},
	{"sievekv/quotient@0.01", "cuckoofilter"},
}
