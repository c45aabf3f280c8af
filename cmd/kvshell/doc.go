// Command kvshell is the interactive shell of sievekv: get, put, scan and
// load keys, flush and compact, and see what each lookup cost and which
// table reads the filters avoided (stats, explain get, tables).
//
//	go run ./cmd/kvshell                 # interactive, on ./sievekv-data
//	kvshell -dir /tmp/db -c 'put a 1; get a'
//	kvshell -json < script.kv            # one command per line, # comments
//
// The interpreter (Interp, interp.go and commands.go) knows nothing of
// terminals: main.go wires the flags, readline (line editing, history,
// completion) and scripting to it, so tests drive it directly. lex.go is
// the command-line syntax and the output escaping. docs/kvshell.md is
// the user guide.
//
// # Concurrency
//
// One goroutine runs commands; an Interp is not safe for concurrent use.
// The only other goroutine is the signal handler that cancels a running
// command's context on Ctrl-C.
//
// # Invariants
//
//	S1 (round trip): every key or value the shell prints, typed back as a
//	   word, gives the same bytes (formatBytes/wordBytes; checked by
//	   TestFormatParseRoundTrip, FuzzSplitStatements, TestShellAgainstModel).
//	S2 (one line): a failed command yields exactly one error line, and in
//	   an interactive session no error ends the session.
//	S3 (scripts stop): a script (-c or stdin) stops at the first failed
//	   command and exits 1; commands after it do not run.
//	S4 (deterministic output): apart from load's timing, a command's output
//	   depends only on the database's contents and counters, so transcripts
//	   run on a fresh in-memory DB with a fixed clock are byte-stable.
package main
