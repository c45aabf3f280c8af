# sievekv build targets. `make test` is what CI runs (.ci/run).
GO        ?= go
PKGS      ?= ./...
FUZZTIME  ?= 30s
# staticcheck comes through the Go module proxy; pinned for repeatable lint.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all run test vet fmt-check lint bench bench-1m gobench fuzz soak tidy dups

all: test

## run: the main job (see README).
run:
	$(GO) run ./cmd/kvshell

## test: vet, gofmt, and the whole suite under the race detector with the
## invariants tag (internal/invariants: the expensive self-checks on). Fuzz
## targets run their committed seed corpora as ordinary tests here.
test: vet fmt-check
	$(GO) test -race -tags invariants -timeout 20m $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

lint: vet fmt-check
	$(GO) run $(STATICCHECK) $(PKGS)

## bench: filterbench, kvbench and clusterbench (quick modes unless
## BENCHFLAGS says otherwise), side by side with the anchor libraries, Pebble,
## goleveldb and raft-boltdb;
## refreshes docs/benchmarks.md, docs/charts/*.png and the raw JSON beside
## them. kvbench's budget sweep runs at 10 bits per key on its own
## 250k-key, 256 KiB-memtable tree (L0 and two levels, loaded by a script
## so every filter reads the same tree; about half a minute), whatever
## BENCHFLAGS says. The packages' `go test -bench` benchmarks: make gobench.
BENCHFLAGS ?= -quick
FILTERBENCH = $(GO) run ./cmd/filterbench $(BENCHFLAGS) -json docs/charts/filterbench.json -plot docs/charts -md docs/.filterbench.md
KVBENCH     = $(GO) run ./cmd/kvbench $(BENCHFLAGS) -engines all,sievekv-control -sweep -budgetsweep -budgetbits 10 -budgetn 250000 -budgetmemtable 262144 -json docs/charts/kvbench.json -plot docs/charts -md docs/.kvbench.md
# Writes as users run them: each engine alone in its process, WAL on
# (NoSync; fillsync8 syncs every write; filllarge writes 4 KiB values),
# medians of seven rounds: quick
# fillseq takes 0.15 s an engine, and its rounds spread by a few percent.
KVWRITES    = $(GO) run ./cmd/kvbench $(BENCHFLAGS) -isolate -rounds 7 -wal -engines sievekv,pebble,goleveldb -workloads fillseq,fillrandom,overwrite,fillsync8,filllarge -json docs/charts/kvbench-writes.json -md docs/.kvbench-writes.md
# The replication side: raftstore beside raft-boltdb v2, and a three-node
# kvserver cluster's writes and leader stops.
CLUSTERBENCH = $(GO) run ./cmd/clusterbench $(BENCHFLAGS) -json docs/charts/clusterbench.json -md docs/.clusterbench.md
bench:
	@mkdir -p docs/charts
	@cut -d' ' -f1-3 /proc/loadavg > docs/.loadavg 2>/dev/null || echo unknown > docs/.loadavg
	$(FILTERBENCH)
	$(KVBENCH)
	$(KVWRITES)
	$(CLUSTERBENCH)
	sh cmd/kvbench/benchdoc.sh docs/.filterbench.md docs/.kvbench.md '$(FILTERBENCH)' '$(KVBENCH)' "$$(cat docs/.loadavg)" docs/.kvbench-writes.md '$(KVWRITES)' docs/.clusterbench.md '$(CLUSTERBENCH)' > docs/benchmarks.md
	@rm -f docs/.filterbench.md docs/.kvbench.md docs/.kvbench-writes.md docs/.clusterbench.md docs/.loadavg

## bench-1m: the 1M-key kvbench runs docs/benchmarks.md keeps (both kinds);
## run `make bench` afterwards to fold them in.
bench-1m:
	@mkdir -p docs/charts
	$(GO) run ./cmd/kvbench -engines all,sievekv-control -sweep -json docs/charts/kvbench-1m.json -md docs/charts/kvbench-1m.md
	$(GO) run ./cmd/kvbench -isolate -rounds 5 -wal -engines sievekv,pebble,goleveldb -workloads fillseq,fillrandom,overwrite,fillsync8,filllarge -json docs/charts/kvbench-writes-1m.json -md docs/charts/kvbench-writes-1m.md

gobench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## fuzz: each fuzz target for FUZZTIME (go test -fuzz takes one target at a time).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg; \
	  done; \
	done

## soak: long randomized runs (enabled by SIEVEKV_SOAK=1 in the tests).
## On 2 cores under -race, 2h per package was not enough to be sure of:
## filters took 52 min and kv 11 min, and tests/ was still in its Pebble
## oracle's large-mem case (300k ops over a 1M-key space, with manual
## compactions of random ranges) after 103 min (2026-12-06), as it was
## after 30 min of a run cut short the day before. Since then a manual
## Compact rewrites only its range's overlap (it rewrote the whole tree)
## and soak draws most of those ranges narrow (tests/oracle_test.go).
soak:
	SIEVEKV_SOAK=1 $(GO) test -race -timeout 6h -run 'Soak|Churn|Oracle' $(PKGS)

tidy:
	$(GO) mod tidy

## dups: the duplicates tool's count over the whole tree with Go import
## groups passed over (docs/tools/dups.sh says why); needs the tool.
dups:
	bash docs/tools/dups.sh --most 200
