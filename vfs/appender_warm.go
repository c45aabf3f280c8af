package vfs

import (
	"errors"
	"sync/atomic"
)

// Warm maps the Appender's first segment and makes the pages of its first
// n bytes present, prefaultChunk at a time, until it is done or stop is
// set. It is for a goroutine that prepares an Appender before handing it
// to its writer, which must not use it until Warm has returned: the
// writer's stores then take no page fault there, and the pages' cost
// (about 1.5 us per 4 KiB, allocated and zeroed) is paid off the commit
// path. A failure to map is returned and leaves the Appender as it was
// (the first Write maps again); a failure to prefault ends the warming
// quietly, as it does the writer's own prefaulting. An Appender that has
// written, or cannot map, is left alone.
func (a *Appender) Warm(n int, stop *atomic.Bool) error {
	if !a.mapped || a.seg != nil || a.off != 0 || a.err != nil {
		return nil
	}
	if err := a.nextSegment(); err != nil {
		if errors.Is(err, ErrMapUnsupported) {
			a.mapped = false // as the first Write would find
			return nil
		}
		return err
	}
	pf, ok := a.seg.(Prefaulter)
	if !ok {
		return nil
	}
	n = min(n, len(a.seg.Bytes()))
	for a.faulted < n && !stop.Load() {
		to := min(a.faulted+prefaultChunk, n)
		if err := pf.Prefault(a.faulted, to-a.faulted); err != nil {
			a.noPrefault = true
			return nil
		}
		a.faulted = to
	}
	return nil
}
