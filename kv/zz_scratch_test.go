package kv

import (
	"encoding/binary"
	"testing"
	"time"
)

func TestScratchDeletePhase(t *testing.T) {
	const n = 100_000
	for round := 0; round < 3; round++ {
		for _, disabled := range []bool{false, true} {
			d, err := Open(t.TempDir(), &Options{DisableWAL: true, DisableTombstoneIndex: disabled, MemTableSize: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			val := make([]byte, 100)
			key := func(i int) []byte {
				k := make([]byte, 16)
				binary.BigEndian.PutUint64(k, uint64(i)*0x9e3779b97f4a7c15)
				return k
			}
			for i := 0; i < n; i++ {
				d.Set(key(i), val, NoSync)
			}
			d.Compact(nil, nil)
			start := time.Now()
			for i := 0; i < n*3/10; i++ {
				d.Delete(key(i), NoSync)
			}
			el := time.Since(start)
			d.Flush()
			m := d.Metrics()
			t.Logf("disabled=%v delete phase %v (%.0f ops/s), rebuilds %d, index entries %d bytes %d B/t %.2f, flushes %d compactions %d", disabled, el, float64(n*3/10)/el.Seconds(), m.TombstoneIndex.Rebuilds, m.TombstoneIndex.Entries, m.TombstoneIndex.Bytes, m.TombstoneIndex.BytesPerTombstone, m.Flushes, m.Compactions)
			d.Close()
		}
	}
}
