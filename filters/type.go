package filters

import (
	"fmt"
	"strings"
)

// Type names a kind of filter. It is the one vocabulary for filter kinds:
// the envelope's type byte is its value, sstable's properties and kv's
// manifest record its TableCode, and flags and tools print its String and
// read it with ParseType.
//
// The zero Type names no filter; options structs read it as "the default".
// Do not renumber: the values are the envelope's type byte, on disk.
type Type uint8

const (
	TypeBloom            Type = 1
	TypeBlockedBloom     Type = 2
	TypeCountingBloom    Type = 3
	TypeScalableBloom    Type = 4
	TypeXor8             Type = 5
	TypeBinaryFuse8      Type = 6
	TypeBinaryFuse16     Type = 7
	TypeBinaryFuse       Type = 8
	TypeCuckoo           Type = 9
	TypeQuotient         Type = 10
	TypeRibbon           Type = 11
	TypeCountingQuotient Type = 12
	TypeVectorQuotient   Type = 13
	TypeMorton           Type = 14
	TypeVacuum           Type = 15
	// TypeRange is the range filter (RangeFilter). Tables carry it in a
	// block of its own, beside the point filter, so it has no TableCode.
	TypeRange Type = 16
	// TypeNone is a table without a filter. It never appears in an
	// envelope (there is nothing to encode), only as a TableCode.
	TypeNone Type = 255
)

// typeInfo is one row of the vocabulary.
type typeInfo struct {
	// name is the canonical spelling: what String prints.
	name string
	// aliases are other spellings ParseType accepts because users have
	// them in flags and scripts (sstable's former names).
	aliases []string
	// tableCode is the byte a table's properties block and the manifest
	// record for a filter a table may embed. It predates Type and numbers
	// the filters differently. Do not renumber: on disk.
	tableCode uint8
	// inTables is false for filters no table may carry (tableCode unused).
	inTables bool
}

var types = map[Type]typeInfo{
	TypeBinaryFuse8:      {name: "binary-fuse-8", aliases: []string{"binaryfuse8"}, tableCode: 0, inTables: true},
	TypeBinaryFuse16:     {name: "binary-fuse-16", aliases: []string{"binaryfuse16"}, tableCode: 1, inTables: true},
	TypeXor8:             {name: "xor-8", aliases: []string{"xor8"}, tableCode: 2, inTables: true},
	TypeBloom:            {name: "bloom", tableCode: 3, inTables: true},
	TypeBlockedBloom:     {name: "blocked-bloom", aliases: []string{"blockedbloom"}, tableCode: 4, inTables: true},
	TypeNone:             {name: "none", tableCode: 5, inTables: true},
	TypeRibbon:           {name: "ribbon", tableCode: 6, inTables: true},
	TypeCountingBloom:    {name: "counting-bloom", aliases: []string{"countingbloom"}},
	TypeScalableBloom:    {name: "scalable-bloom", aliases: []string{"scalablebloom"}},
	TypeBinaryFuse:       {name: "binary-fuse", aliases: []string{"binaryfuse"}, tableCode: 7, inTables: true},
	TypeCuckoo:           {name: "cuckoo"},
	TypeQuotient:         {name: "quotient"},
	TypeCountingQuotient: {name: "counting-quotient", aliases: []string{"countingquotient"}},
	TypeVectorQuotient:   {name: "vector-quotient", aliases: []string{"vectorquotient"}},
	TypeMorton:           {name: "morton"},
	TypeVacuum:           {name: "vacuum"},
	TypeRange:            {name: "range"},
}

// String returns t's canonical name.
func (t Type) String() string {
	if info, ok := types[t]; ok {
		return info.name
	}
	return fmt.Sprintf("filtertype(%d)", uint8(t))
}

// Known reports whether t is in the vocabulary.
func (t Type) Known() bool {
	_, ok := types[t]
	return ok
}

// ParseType reads a filter name: the canonical name or an accepted alias,
// in any case. The error wraps ErrUnknownType.
func ParseType(s string) (Type, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for t, info := range types {
		if info.name == s {
			return t, nil
		}
		for _, a := range info.aliases {
			if a == s {
				return t, nil
			}
		}
	}
	return 0, fmt.Errorf("%w %q", ErrUnknownType, s)
}

// TableCode returns the byte a table records for t, and false if no table
// may carry t.
func (t Type) TableCode() (uint8, bool) {
	info, ok := types[t]
	return info.tableCode, ok && info.inTables
}

// TypeFromTableCode is the inverse of TableCode.
func TypeFromTableCode(code uint8) (Type, bool) {
	for t, info := range types {
		if info.inTables && info.tableCode == code {
			return t, true
		}
	}
	return 0, false
}
