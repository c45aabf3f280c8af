package vfs

import (
	"errors"
	"sync/atomic"
)

// warmChunk is how much of a segment a warming prefaults per system call.
// The warming runs beside the writer, which no longer waits for it, so a
// chunk's length costs no one latency; it is large because a goroutine on
// a busy machine can wait milliseconds for a P after every system call,
// and a warming that paid that every 64 KiB (prefaultChunk) was seen
// still at 0-384 KiB when its log was needed (docs/design.md, "Prefaulted
// WAL pages").
const warmChunk = 1 << 20

// warming is a StartWarm goroutine prefaulting the Appender's segment
// beside its writer.
type warming struct {
	stop atomic.Bool
	done chan struct{} // closed when the goroutine has returned
}

// StartWarm maps the Appender's first segment, in the caller, and starts a
// goroutine that makes the pages of its first n bytes present, warmChunk
// at a time. It is for whoever prepares an Appender before handing it to
// its writer: the writer's stores into warmed pages take no page fault,
// and the pages' cost (about 1.5 us per 4 KiB, allocated and zeroed) is
// paid off the commit path.
//
// The writer need not wait for the warming: it may Write, Sync and Size
// at once. Writer and warming share a high-water mark of the pages made
// present, so each skips what the other did, and both only prefault,
// which never changes a byte. Only the steps that unmap the segment (the
// writer's move to a second segment, and Close) stop the warming and wait
// for the chunk in flight first.
//
// A failure to map is returned and leaves the Appender as it was (the
// first Write maps again); a failure to prefault ends the warming
// quietly, as it does the writer's own prefaulting. An Appender that has
// written, cannot map, or is warming already is left alone.
func (a *Appender) StartWarm(n int) error {
	if !a.mapped || a.seg != nil || a.off != 0 || a.err != nil || a.warm != nil {
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
	w := &warming{done: make(chan struct{})}
	a.warm = w
	a.faultedTo.Store(0)
	go a.runWarm(w, pf, min(n, len(a.seg.Bytes())))
	return nil
}

// runWarm is the warming goroutine. It touches nothing of the Appender's
// but faultedTo.
func (a *Appender) runWarm(w *warming, pf Prefaulter, n int) {
	defer close(w.done)
	for !w.stop.Load() {
		from := int(a.faultedTo.Load())
		if from >= n {
			return
		}
		to := min(from+warmChunk, n)
		if err := pf.Prefault(from, to-from); err != nil {
			return
		}
		raiseTo(&a.faultedTo, to)
	}
}

// stopWarm stops the warming, if one runs, and waits for it to return;
// the writer keeps what it made present. It must come before seg is
// unmapped.
func (a *Appender) stopWarm() {
	if a.warm == nil {
		return
	}
	a.warm.stop.Store(true)
	<-a.warm.done
	a.faulted = max(a.faulted, int(a.faultedTo.Load()))
	a.warm = nil
}

// raiseTo sets v to x unless it holds more already.
func raiseTo(v *atomic.Int64, x int) {
	for {
		old := v.Load()
		if old >= int64(x) || v.CompareAndSwap(old, int64(x)) {
			return
		}
	}
}
