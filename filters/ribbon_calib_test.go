package filters

import (
	"fmt"
	"os"
	"testing"
)

// TestRibbonCalibrate measures, for each band width and n, the smallest
// overhead (slots/n - 1, in steps of 0.5%) at which at least 90% of builds
// of random distinct keys succeed on the first seed. It backs the sizing
// constants of ribbonBlocks and only runs with SIEVEKV_RIBBON_CALIBRATE=1.
func TestRibbonCalibrate(t *testing.T) {
	if os.Getenv("SIEVEKV_RIBBON_CALIBRATE") == "" {
		t.Skip("set SIEVEKV_RIBBON_CALIBRATE=1 to measure the sizing")
	}
	var b RibbonBuilder
	for _, w := range []int{64, 128} {
		for lg := 7; lg <= 20; lg++ {
			n := 1 << lg
			trials := 40
			if n >= 1<<17 {
				trials = 20
			}
			found := -1.0
			for step := 0; step <= 60; step++ {
				eps := float64(step) * 0.005
				blocks := uint32((uint64(float64(n)*(1+eps)) + 63) / 64)
				if int(blocks)*64 < w+64 {
					continue
				}
				ok := 0
				for tr := 0; tr < trials; tr++ {
					keys := b.sortMixed(randomHashes(uint64(lg*1000+tr), n), staticSeed(0))
					if b.band(keys, blocks, w) {
						ok++
					}
				}
				if ok*10 >= trials*9 {
					found = float64(blocks*64)/float64(n) - 1
					break
				}
			}
			fmt.Printf("calib w=%d log2n=%d eps90=%.4f\n", w, lg, found)
		}
	}
}
