module github.com/sievekv/sievekv

go 1.24.0

require (
	github.com/FastFilter/xorfilter v0.2.1
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/golang/snappy v1.0.0
	github.com/google/btree v1.1.3
	github.com/syndtr/goleveldb v1.0.0
)

require github.com/bits-and-blooms/bitset v1.24.2 // indirect
