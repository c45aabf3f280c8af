// Package benchreport is what the benchmark programs (cmd/filterbench,
// cmd/kvbench) share in reporting a run: markdown tables and chart links for
// docs/benchmarks.md, the output flags (-json, -plot, -md) and the JSON and
// chart files they ask for, the flags a command line set (for presets such
// as -quick), main's error exit and its interrupt (which removes the
// TempDir directories), and the log-axis ticks of their charts. Each
// program keeps its own columns, goals and charts; only the mechanics live
// here.
//
// Concurrency: the functions hold no state but the AtInterrupt registry
// (TempDir's directories), guarded by a mutex for any goroutine; Main runs
// it on SIGINT or SIGTERM. Outputs.Write writes the files it is given and
// nothing else.
//
// Invariants:
//
//	BR1 (order): Rows and Distinct keep the results' order, so a report
//	   lists sizes, workloads and rows in the order the run measured them.
//	BR2 (only what is asked): Outputs.Write draws charts only when a chart
//	   directory is set and writes JSON only when a JSON path is set.
//	BR3 (portable links): ChartLinks links each chart relative to the
//	   markdown file, so docs/ renders wherever it is served.
package benchreport
