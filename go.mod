module github.com/sievekv/sievekv

go 1.24.0

require (
	github.com/FastFilter/xorfilter v0.2.1
	github.com/cespare/xxhash/v2 v2.3.0
)
