package filters

import (
	"math/rand/v2"
	"testing"
)

func refPeel(l staticLayout, h []uint64, seed uint64) int {
	cnt := make([]int, l.size)
	xs := make([]uint64, l.size)
	for _, x := range h {
		hh := staticMix(x, seed)
		a, b, c := fuse3Positions(hh, l.segCountLen, l.segLen, l.segMask)
		for _, p := range []uint32{a, b, c} {
			cnt[p]++
			xs[p] ^= hh
		}
	}
	var q []uint32
	for i := range cnt {
		if cnt[i] == 1 {
			q = append(q, uint32(i))
		}
	}
	k := 0
	for len(q) > 0 {
		s := q[len(q)-1]
		q = q[:len(q)-1]
		if cnt[s] != 1 {
			continue
		}
		hh := xs[s]
		k++
		a, b, c := fuse3Positions(hh, l.segCountLen, l.segLen, l.segMask)
		for _, p := range []uint32{a, b, c} {
			cnt[p]--
			xs[p] ^= hh
			if cnt[p] == 1 {
				q = append(q, p)
			}
		}
	}
	return k
}

func TestFuseProbe2(t *testing.T) {
	for _, n := range []int{11450, 11521} {
		okOurs, okRef := 0, 0
		for s := range 5 {
			rng := rand.New(rand.NewPCG(uint64(s), uint64(n)))
			h := make([]uint64, n)
			for i := range h {
				h[i] = rng.Uint64()
			}
			var b FuseBuilder
			l := fuse3Layout(n)
			for a := range 40 {
				if b.attempt(&l, h, staticSeed(a)) {
					okOurs++
				}
				if refPeel(l, h, staticSeed(a)) == n {
					okRef++
				}
			}
		}
		t.Logf("n=%d: seeds ok ours %d/200 ref %d/200", n, okOurs, okRef)
	}
}
