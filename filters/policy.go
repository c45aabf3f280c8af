package filters

import (
	"fmt"
	"math"
	"sort"
)

// Policy builds the filter a table embeds. A table format needs no more
// than this to write a filter, and Unmarshal's Filter to probe one: it
// never learns which filter it holds. Implementations are immutable and
// safe for concurrent use.
type Policy interface {
	// Type is the filter kind Build encodes.
	Type() Type
	// Build returns the encoding (decodable by Unmarshal) of a filter that
	// holds every hash in hashes. Duplicate hashes are allowed: two
	// distinct user keys may share a 64-bit hash. hashes is not retained.
	Build(hashes []uint64) ([]byte, error)
}

// Chooser picks a table's filter policy once the table is complete and
// its distinct key count known: the filter that fits a memory budget
// depends on it (ChooseTableFilter). Implementations are safe for
// concurrent use.
type Chooser interface {
	// Choose returns the policy for a filter of distinctKeys keys (at
	// least one).
	Choose(distinctKeys int) (Policy, error)
}

// PolicyParams carry the sizing knobs of the policies that have one; each
// policy reads only its own.
type PolicyParams struct {
	// BloomBitsPerKey sizes TypeBloom and TypeBlockedBloom (bits per key).
	BloomBitsPerKey float64
	// RibbonBits is TypeRibbon's result width, 1 to 16.
	RibbonBits int
	// Fuse is TypeBinaryFuse's arity and fingerprint width.
	Fuse FuseOptions
}

// policyMaker returns a policy of one type for the given parameters.
type policyMaker func(PolicyParams) (Policy, error)

// policies maps every filter a table may embed to its maker. A filter
// registers its policy here (from table_policies.go), so a table format
// that goes through NewPolicy needs no edit for a new filter.
var policies = map[Type]policyMaker{}

func registerPolicy(t Type, mk policyMaker) {
	if _, dup := policies[t]; dup {
		panic(fmt.Sprintf("filters: policy for %s registered twice", t))
	}
	if _, ok := t.TableCode(); !ok {
		panic(fmt.Sprintf("filters: policy for %s, which has no table code", t))
	}
	policies[t] = mk
}

// NewPolicy returns the table policy of type t. The error wraps
// ErrUnknownType for a type without one (TypeNone included: a table
// without a filter builds nothing) and ErrInvalidArgument for parameters
// out of range.
func NewPolicy(t Type, p PolicyParams) (Policy, error) {
	mk, ok := policies[t]
	if !ok {
		return nil, fmt.Errorf("%w: %s has no table policy", ErrUnknownType, t)
	}
	return mk(p)
}

// PolicyTypes lists the types NewPolicy accepts, in Type order.
func PolicyTypes() []Type {
	out := make([]Type, 0, len(policies))
	for t := range policies {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// staticPolicy is a policy whose filter has no sizing knob.
type staticPolicy struct {
	t     Type
	build func([]uint64) (Filter, error)
}

func (p staticPolicy) Type() Type { return p.t }

func (p staticPolicy) Build(hashes []uint64) ([]byte, error) {
	f, err := p.build(hashes)
	if err != nil {
		return nil, err
	}
	return f.MarshalBinary()
}

// bloomFPRate is the false-positive rate of a Bloom filter of bitsPerKey
// bits per key with the optimal number of probes, fp = exp(-b * ln2^2)
// (Broder & Mitzenmacher, 2004), clamped to what NewBloom accepts.
func bloomFPRate(bitsPerKey float64) float64 {
	fp := math.Exp(-bitsPerKey * math.Ln2 * math.Ln2)
	return min(max(fp, 1e-12), 0.5)
}
