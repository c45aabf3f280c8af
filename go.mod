module github.com/sievekv/sievekv

go 1.24.0

require (
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/cespare/xxhash/v2 v2.3.0
)

require github.com/bits-and-blooms/bitset v1.24.2 // indirect
