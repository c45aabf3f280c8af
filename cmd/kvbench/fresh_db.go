package main

// Workloads that load a DB of their own (the bounded scans, deletechurn)
// run on a copy of the engine's runner with a fresh directory and I/O
// counters, so the main DB and its figures stay as the other workloads
// left them.

import (
	"io"
	"os"
)

// openFresh opens a fresh DB of r's engine for workload w with open and
// returns a runner on it, a copy of r, and closeDB, which closes the DB
// and removes its directory.
func openFresh(r *runner, w, root string, open func(dir string, io *ioCounters) (engine, error)) (*runner, func() error, error) {
	fr := *r
	fr.io = &ioCounters{}
	fr.dir = dirOf(root, r.name, w)
	e, err := open(fr.dir, fr.io)
	if err != nil {
		return nil, nil, err
	}
	fr.eng = e
	closeDB := func() error {
		err := e.close()
		os.RemoveAll(fr.dir)
		return err
	}
	return &fr, closeDB, nil
}

// measureFresh measures p on fr, then runs done (which ends fr's fresh
// DB); done's error is returned when the measurement had none.
func measureFresh(fr *runner, p phaseSpec, done func() error, progress io.Writer) ([]result, error) {
	res, err := measure(fr, p, progress)
	if cerr := done(); err == nil {
		err = cerr
	}
	return []result{res}, err
}
