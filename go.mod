module github.com/sievekv/sievekv

go 1.24.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/seiflotfy/cuckoofilter v0.0.0-20240715131351-a2f2c23f1771
)

require github.com/dgryski/go-metro v0.0.0-20200812162917-85c65e2d0165 // indirect
