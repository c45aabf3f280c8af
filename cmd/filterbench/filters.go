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

// querier is one built filter. Queries go through this interface for every
// filter alike (one dynamic call each, the same overhead for all).
type querier interface {
	// query asks about a key; static filters and xorfilter take the
	// key's 64-bit hash (their natural input), the others the key bytes.
	query(key []byte, h uint64) bool
	bytes() int
}

// remover is a querier that supports deletion.
type remover interface {
	remove(key []byte, h uint64) bool
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
				func(f *filters.Bloom) querier { return bloomQ{f} })},
			spec{"sievekv/blocked-bloom", libSieve, t, "key", fromKeys(func(n int) (*filters.BlockedBloom, error) { return filters.NewBlockedBloom(n, t) },
				func(f *filters.BlockedBloom) querier { return blockedQ{f} })},
			spec{"sievekv/counting-bloom", libSieve, t, "key", fromKeys(func(n int) (*filters.CountingBloom, error) { return filters.NewCountingBloom(n, t) },
				func(f *filters.CountingBloom) querier { return countingQ{f} })},
			// The scalable filter starts at a quarter of n so that it
			// really grows (three stages at n).
			spec{"sievekv/scalable-bloom", libSieve, t, "key", fromKeys(func(n int) (*filters.ScalableBloom, error) { return filters.NewScalableBloom(max(n/4, 1), t) },
				func(f *filters.ScalableBloom) querier { return scalableQ{f} })},
			spec{"sievekv/quotient", libSieve, t, "key", fromKeysChecked(func(n int) (*filters.Quotient, error) { return filters.NewQuotient(n, t) },
				func(f *filters.Quotient) querier { return quotientQ{f} })},
			spec{"bloom/v3", libBloom, t, "key", func(keys [][]byte, _ []uint64) (querier, error) {
				f := bbloom.NewWithEstimates(uint(len(keys)), t)
				for _, k := range keys {
					f.Add(k)
				}
				return bbQ{f}, nil
			}},
		)
	}
	for _, t := range cuckooTargets {
		t := t
		out = append(out, spec{"sievekv/cuckoo", libSieve, t, "key", fromKeysChecked(func(n int) (*filters.Cuckoo, error) { return filters.NewCuckoo(n, t) },
			func(f *filters.Cuckoo) querier { return cuckooQ{f} })})
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
					return seifQ{f}, nil
				}
				if capacity > 8*uint(len(keys)) {
					return nil, fmt.Errorf("seiflotfy/cuckoofilter: inserts fail at capacity %d", capacity)
				}
			}
		}},
		spec{"sievekv/xor8", libSieve, 0, "hash", fromHashes(filters.BuildXor8FromHashes, func(f *filters.Xor8) querier { return xor8Q{f} })},
		spec{"sievekv/binary-fuse8", libSieve, 0, "hash", fromHashes(filters.BuildBinaryFuse8FromHashes, func(f *filters.BinaryFuse8) querier { return bf8Q{f} })},
		spec{"sievekv/binary-fuse16", libSieve, 0, "hash", fromHashes(filters.BuildBinaryFuse16FromHashes, func(f *filters.BinaryFuse16) querier { return bf16Q{f} })},
		spec{"xorfilter/xor8", libXor, 0, "hash", fromHashes(xorfilter.Populate, func(f *xorfilter.Xor8) querier { return xorQ{f} })},
		spec{"xorfilter/binary-fuse8", libXor, 0, "hash", fromHashes(xorfilter.PopulateBinaryFuse8, func(f *xorfilter.BinaryFuse8) querier { return fuse8Q{f} })},
		spec{"xorfilter/binary-fuse16", libXor, 0, "hash", fromHashes(xorfilter.NewBinaryFuse[uint16], func(f *xorfilter.BinaryFuse[uint16]) querier { return fuse16Q{f} })},
	)
	// The general binary fuse filter at the widths the fixed ones lack,
	// and at 8 bits to compare with its specialised sibling.
	for _, bits := range []int{4, 6, 8, 10, 12} {
		o := filters.FuseOptions{Arity: 4, FingerprintBits: bits}
		out = append(out, spec{fmt.Sprintf("sievekv/binary-fuse-a4-%d", bits), libSieve, 0, "hash",
			fromHashes(func(hs []uint64) (*filters.BinaryFuse, error) { return filters.BuildBinaryFuseFromHashes(hs, o) },
				func(f *filters.BinaryFuse) querier { return bfQ{f} })})
	}
	// Ribbon at 7 (the sstable default), 8 and 10 result bits, the widths
	// docs/filters.md ("Ribbon filter") compares with binary fuse.
	for _, bits := range []int{7, 8, 10} {
		o := filters.RibbonOptions{ResultBits: bits}
		out = append(out, spec{fmt.Sprintf("sievekv/ribbon-%d", bits), libSieve, 0, "hash",
			fromHashes(func(hs []uint64) (*filters.Ribbon, error) { return filters.BuildRibbonFromHashes(hs, o) },
				func(f *filters.Ribbon) querier { return ribbonQ{f} })})
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
			out = append(out, spec{"sievekv/" + name, libSieve, t, "key", fromKeysChecked(newDyn[name], func(f dynamicFilter) querier { return dynQ{f} })})
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
			return nil, err
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
			return nil, err
		}
		for _, k := range keys {
			if err := f.Add(k); err != nil {
				return nil, err
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
		return wrap(f), err
	}
}

// dynamicFilter is what the newer dynamic filters share; one wrapper
// serves them all (a query through the interface costs the same call for
// each, so they compare fairly with one another).
type dynamicFilter interface {
	Add([]byte) error
	Remove([]byte) bool
	MayContain([]byte) bool
	MarshalBinary() ([]byte, error)
}

type dynQ struct{ f dynamicFilter }

func (q dynQ) query(k []byte, _ uint64) bool  { return q.f.MayContain(k) }
func (q dynQ) bytes() int                     { return encodedSize(q.f) }
func (q dynQ) remove(k []byte, _ uint64) bool { return q.f.Remove(k) }

type ribbonQ struct{ f *filters.Ribbon }

func (q ribbonQ) query(_ []byte, h uint64) bool { return q.f.MayContainHash(h) }
func (q ribbonQ) bytes() int                    { return encodedSize(q.f) }

// Each filter has its own wrapper holding the concrete type, so a query is
// one dynamic call (through querier) and then a direct, inlinable call,
// exactly as for the anchors' wrappers. (Holding sievekv's filters as a
// filters.Filter would add a second dynamic call that the anchors do not
// pay.) Sizes are the checksummed encodings.

func encodedSize(f interface{ MarshalBinary() ([]byte, error) }) int {
	b, err := f.MarshalBinary()
	if err != nil {
		return -1
	}
	return len(b)
}

type bloomQ struct{ f *filters.Bloom }

func (q bloomQ) query(k []byte, _ uint64) bool { return q.f.MayContain(k) }
func (q bloomQ) bytes() int                    { return encodedSize(q.f) }

type blockedQ struct{ f *filters.BlockedBloom }

func (q blockedQ) query(k []byte, _ uint64) bool { return q.f.MayContain(k) }
func (q blockedQ) bytes() int                    { return encodedSize(q.f) }

type countingQ struct{ f *filters.CountingBloom }

func (q countingQ) query(k []byte, _ uint64) bool  { return q.f.MayContain(k) }
func (q countingQ) bytes() int                     { return encodedSize(q.f) }
func (q countingQ) remove(k []byte, _ uint64) bool { return q.f.Remove(k) == nil }

type scalableQ struct{ f *filters.ScalableBloom }

func (q scalableQ) query(k []byte, _ uint64) bool { return q.f.MayContain(k) }
func (q scalableQ) bytes() int                    { return encodedSize(q.f) }

type cuckooQ struct{ f *filters.Cuckoo }

func (q cuckooQ) query(k []byte, _ uint64) bool  { return q.f.MayContain(k) }
func (q cuckooQ) bytes() int                     { return encodedSize(q.f) }
func (q cuckooQ) remove(k []byte, _ uint64) bool { return q.f.Remove(k) }

type quotientQ struct{ f *filters.Quotient }

func (q quotientQ) query(k []byte, _ uint64) bool  { return q.f.MayContain(k) }
func (q quotientQ) bytes() int                     { return encodedSize(q.f) }
func (q quotientQ) remove(k []byte, _ uint64) bool { return q.f.Remove(k) }

// The static filters are queried by hash, their natural input.

type xor8Q struct{ f *filters.Xor8 }

func (q xor8Q) query(_ []byte, h uint64) bool { return q.f.MayContainHash(h) }
func (q xor8Q) bytes() int                    { return encodedSize(q.f) }

type bf8Q struct{ f *filters.BinaryFuse8 }

func (q bf8Q) query(_ []byte, h uint64) bool { return q.f.MayContainHash(h) }
func (q bf8Q) bytes() int                    { return encodedSize(q.f) }

type bf16Q struct{ f *filters.BinaryFuse16 }

func (q bf16Q) query(_ []byte, h uint64) bool { return q.f.MayContainHash(h) }
func (q bf16Q) bytes() int                    { return encodedSize(q.f) }

type bfQ struct{ f *filters.BinaryFuse }

func (q bfQ) query(_ []byte, h uint64) bool { return q.f.MayContainHash(h) }
func (q bfQ) bytes() int                    { return encodedSize(q.f) }

type bbQ struct{ f *bbloom.BloomFilter }

func (q bbQ) query(k []byte, _ uint64) bool { return q.f.Test(k) }
func (q bbQ) bytes() int                    { return int(q.f.Cap() / 8) }

type seifQ struct{ f *cuckoo.Filter }

func (q seifQ) query(k []byte, _ uint64) bool  { return q.f.Lookup(k) }
func (q seifQ) remove(k []byte, _ uint64) bool { return q.f.Delete(k) }
func (q seifQ) bytes() int                     { return len(q.f.Encode()) }

type xorQ struct{ f *xorfilter.Xor8 }

func (q xorQ) query(_ []byte, h uint64) bool { return q.f.Contains(h) }
func (q xorQ) bytes() int                    { return len(q.f.Fingerprints) }

type fuse8Q struct{ f *xorfilter.BinaryFuse8 }

func (q fuse8Q) query(_ []byte, h uint64) bool { return q.f.Contains(h) }
func (q fuse8Q) bytes() int                    { return len(q.f.Fingerprints) }

type fuse16Q struct{ f *xorfilter.BinaryFuse[uint16] }

func (q fuse16Q) query(_ []byte, h uint64) bool { return q.f.Contains(h) }
func (q fuse16Q) bytes() int                    { return 2 * len(q.f.Fingerprints) }

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
