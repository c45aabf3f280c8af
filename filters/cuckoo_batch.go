package filters

// Batch updates of a Cuckoo. A caller with many hashes at once (sievekv's
// tombstone index: every tombstone a flush wrote, every one a compaction
// dropped) pays, one by one, a cache miss or two per hash once the table
// outgrows the cache: a hash's two buckets lie anywhere in the table, and
// an add's or a remove's branches on them keep the core from running far
// enough ahead for the next hash's misses to overlap. The batch calls load
// both buckets of the next batchAhead hashes first, in a loop with no
// branch on what they hold, so those misses overlap; the adds and removes
// that follow find their buckets cached. Each hash is then added or
// removed exactly as AddHash and RemoveHash do, in the caller's order, so
// a batch leaves the very table (lanes, count, walk state) the same calls
// one by one would (F1 and F2 hold as they do for them). Grouping the
// hashes by first bucket as well was measured and dropped: the partner
// bucket is still anywhere, and the grouping pass cost more than it saved
// (docs/design.md, "The tombstone index").

const (
	// batchAhead is how many hashes ahead of the work their buckets are
	// loaded: 16 hashes, up to 32 independent loads, about what a core
	// keeps in flight.
	batchAhead = 16
	// batchLoadAheadBytes is the table size from which the batch calls load
	// ahead: below it the table stays in a core's L2 (512 KiB here, 256 KiB
	// to 2 MiB on current cores), and the extra pass only costs
	// (BenchmarkCuckooBatch: +25% at 196 KB, -27% at 6 MB).
	batchLoadAheadBytes = 1 << 20
)

// AddHashes adds one copy of each hash of hs in order, except that a hash
// whose alias class (AliasHash) already holds maxCopies copies, those this
// call added included, is appended to spill instead; maxCopies <= 0 means
// no bound. It returns spill and n, the number of hashes of hs dealt with:
// n < len(hs) only with an error wrapping ErrFull, when hs[n] found no slot
// within the walk's limit; the filter then holds hs[:n] (but the spilled
// ones) and is otherwise as it was (F2).
func (c *Cuckoo) AddHashes(hs []uint64, maxCopies int, spill []uint64) (_ []uint64, n int, _ error) {
	ahead := c.loadsAhead()
	for start := 0; start < len(hs); start += batchAhead {
		group := hs[start:min(start+batchAhead, len(hs))]
		if ahead {
			c.loadBuckets(group)
		}
		for i, h := range group {
			spilled, err := c.addBounded(h, maxCopies)
			if err != nil {
				return spill, start + i, err
			}
			if spilled {
				spill = append(spill, h)
			}
		}
	}
	return spill, len(hs), nil
}

// RemoveHashes removes one copy of each hash of hs in order, each a member
// (see the type doc), and returns how many it found.
func (c *Cuckoo) RemoveHashes(hs []uint64) int {
	ahead := c.loadsAhead()
	found := 0
	for start := 0; start < len(hs); start += batchAhead {
		group := hs[start:min(start+batchAhead, len(hs))]
		if ahead {
			c.loadBuckets(group)
		}
		for _, h := range group {
			if c.RemoveHash(h) {
				found++
			}
		}
	}
	return found
}

// loadsAhead reports whether the table is large enough for loadBuckets to
// pay.
func (c *Cuckoo) loadsAhead() bool { return 8*len(c.slots.words) >= batchLoadAheadBytes }

// loadBuckets reads both buckets of every hash of group, independently of
// one another, so that their cache misses overlap; the work on the group
// that follows then finds them cached. The sum is kept only so the
// compiler cannot drop the loads.
func (c *Cuckoo) loadBuckets(group []uint64) {
	var sum uint64
	for _, h := range group {
		fp, i1 := c.derive(h)
		sum += c.bucket(i1) + c.bucket(c.alt(i1, fp))
	}
	c.loadSink = sum
}

// addBounded is CopiesHash(h) >= maxCopies, then, if not, AddHash(h), with
// the hash split and both buckets read once for the two: a flush's
// tombstones each ask both (measured in BenchmarkCuckooBatch). It reports
// whether h was spilled (not added) instead.
func (c *Cuckoo) addBounded(h uint64, maxCopies int) (spilled bool, _ error) {
	if c.emptyTable() {
		return false, errZeroValueFull
	}
	fp, i1 := c.derive(h)
	i2 := c.alt(i1, fp)
	b1, b2 := c.bucket(i1), c.bucket(i2)
	if maxCopies > 0 && c.matchLanes(b1, fp)|c.matchLanes(b2, fp) != 0 {
		n := c.countLanes(b1, fp)
		if i2 != i1 {
			n += c.countLanes(b2, fp)
		}
		if n >= maxCopies {
			return true, nil
		}
	}
	// tryPut on i1, then on i2 (the same bucket, still full, if i2 == i1).
	if m := c.matchLanes(b1, 0); m != 0 {
		c.setBucket(i1, b1|fp<<c.laneOf(m))
		c.count++
		return false, nil
	}
	if m := c.matchLanes(b2, 0); m != 0 && i2 != i1 {
		c.setBucket(i2, b2|fp<<c.laneOf(m))
		c.count++
		return false, nil
	}
	return false, c.walk(i1, i2, fp)
}
