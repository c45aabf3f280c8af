package filters

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil/golden"
)

// TestScalableBloomStages: capacities grow x2 and stage targets tighten x0.5
// from fpRate/2, each stage sized exactly as a standalone Bloom would be.
func TestScalableBloomStages(t *testing.T) {
	const initialN, p = 1000, 0.01
	s, err := NewScalableBloom(initialN, p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	for i := 0; i < 10000; i++ {
		s.Add(bloomKey(buf, 'p', 4, uint64(i)))
	}
	wantCounts := []uint64{1000, 2000, 4000, 3000}
	if s.Stages() != len(wantCounts) {
		t.Fatalf("%d stages, want %d", s.Stages(), len(wantCounts))
	}
	for i, st := range s.stages {
		capacity := uint64(initialN) << i
		m, k, err := bloomSizing(int(capacity), p*0.5*math.Pow(0.5, float64(i)))
		if err != nil {
			t.Fatal(err)
		}
		if st.capacity != capacity || st.count != wantCounts[i] || st.bloom.m != m || st.bloom.k != k {
			t.Fatalf("stage %d: capacity %d count %d m %d k %d; want %d %d %d %d",
				i, st.capacity, st.count, st.bloom.m, st.bloom.k, capacity, wantCounts[i], m, k)
		}
	}
	var total uint64
	for _, st := range s.stages {
		total += st.bloom.m
	}
	if s.Bits() != total {
		t.Fatalf("Bits() = %d, want %d", s.Bits(), total)
	}
}

// TestScalableBloomFullChainFPRate measures the worst point for the compound
// bound: every stage exactly full (15x initialN keys fills stages of 1x, 2x,
// 4x and 8x). Both the estimate and the measured rate must stay <= target.
func TestScalableBloomFullChainFPRate(t *testing.T) {
	const initialN, p, queries = 10000, 0.01, 1000000
	s, _ := NewScalableBloom(initialN, p)
	buf := make([]byte, 16)
	for i := 0; i < 15*initialN; i++ {
		s.Add(bloomKey(buf, 'p', 21, uint64(i)))
		if i%initialN == 0 && s.EstimatedFPRate() > p {
			t.Fatalf("after %d keys EstimatedFPRate %v > target", i+1, s.EstimatedFPRate())
		}
	}
	if s.Stages() != 4 {
		t.Fatalf("%d stages, want 4", s.Stages())
	}
	measured := float64(bloomCountFP(s, 'a', 21, queries)) / queries
	if measured > p {
		t.Fatalf("full chain: measured FP %v > target %v", measured, p)
	}
}

func TestScalableBloomOptions(t *testing.T) {
	for _, o := range []ScalableBloomOptions{
		{0, 2}, {1, 2}, {-0.5, 2}, {math.NaN(), 2}, {0.5, 0}, {0.5, 1}, {0.5, 65},
	} {
		if _, err := NewScalableBloomWithOptions(100, 0.01, o); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("options %+v: err = %v, want ErrInvalidArgument", o, err)
		}
	}
	// A gentler ratio and faster growth still keep the compound bound.
	const initialN, p = 500, 0.02
	s, err := NewScalableBloomWithOptions(initialN, p, ScalableBloomOptions{TighteningRatio: 0.8, GrowthFactor: 4})
	if err != nil {
		t.Fatal(err)
	}
	keys := bloomKeys('p', 31, 50*initialN)
	for _, k := range keys {
		s.Add(k)
	}
	if s.Stages() != 4 { // 500 + 2000 + 8000 + 32000 >= 25000
		t.Fatalf("%d stages, want 4", s.Stages())
	}
	var rt ScalableBloom
	if err := rt.UnmarshalBinary(bloomMustMarshal(t, s)); err != nil {
		t.Fatal(err)
	}
	if rt.ratio != 0.8 || rt.growth != 4 {
		t.Fatalf("options lost in round trip: ratio %v growth %d", rt.ratio, rt.growth)
	}
	for i, k := range keys {
		if !rt.MayContain(k) {
			t.Fatalf("false negative for key %d after round trip", i)
		}
	}
	if measured := float64(bloomCountFP(&rt, 'a', 31, 300000)) / 300000; measured > p {
		t.Fatalf("ratio 0.8 growth 4: measured FP %v > target %v", measured, p)
	}
}

func TestScalableBloomDecodeRejectsImpossibleParameters(t *testing.T) {
	stage := func(w *bodyWriter, capacity, count uint64) {
		w.u64(capacity)
		w.u64(count)
		newBloomMK(131, 3).appendBody(w)
	}
	body := func(p, r float64, growth uint32, initialN uint64, stages uint32, add func(w *bodyWriter)) []byte {
		var w bodyWriter
		w.f64(p)
		w.f64(r)
		w.u32(growth)
		w.u64(initialN)
		w.u32(stages)
		add(&w)
		return w.buf
	}
	one := func(w *bodyWriter) { stage(w, 10, 3) }
	two := func(c0 uint64) func(w *bodyWriter) {
		return func(w *bodyWriter) { stage(w, 10, c0); stage(w, 20, 1) }
	}
	cases := map[string][]byte{
		"fpRate 0":          body(0, 0.5, 2, 10, 1, one),
		"fpRate NaN":        body(math.NaN(), 0.5, 2, 10, 1, one),
		"ratio 1":           body(0.01, 1, 2, 10, 1, one),
		"growth 1":          body(0.01, 0.5, 1, 10, 1, one),
		"initialN 0":        body(0.01, 0.5, 2, 0, 1, one),
		"initialN > MaxInt": body(0.01, 0.5, 2, 1<<63, 1, one),
		"zero stages":       body(0.01, 0.5, 2, 10, 0, func(*bodyWriter) {}),
		"stage count lies":  body(0.01, 0.5, 2, 10, 1<<30, one),
		"wrong capacity":    body(0.01, 0.5, 2, 11, 1, one),
		"count > capacity":  body(0.01, 0.5, 2, 10, 1, func(w *bodyWriter) { stage(w, 10, 11) }),
		"early stage short": body(0.01, 0.5, 2, 10, 2, two(9)),
		"missing stage":     body(0.01, 0.5, 2, 10, 2, one),
		"bad stage bloom": body(0.01, 0.5, 2, 10, 1, func(w *bodyWriter) {
			w.u64(10)
			w.u64(3)
			newBloomMK(131, 3).appendBody(w)
			w.buf[len(w.buf)-1] = 0xff // bits past m
		}),
	}
	assertBodies(t, TypeScalableBloom, scalableBloomVersion, cases, map[string][]byte{
		"one stage":  body(0.01, 0.5, 2, 10, 1, one),
		"two stages": body(0.01, 0.5, 2, 10, 2, two(10)),
	})
}

// TestScalableBloomGolden pins a two-stage chain: initialN 2 at 10%, five
// keys (stage 0 holds 2, stage 1 holds 3 of 4).
func TestScalableBloomGolden(t *testing.T) {
	s, err := NewScalableBloom(2, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		s.Add([]byte(k))
	}
	if s.Stages() != 2 {
		t.Fatalf("%d stages, want 2", s.Stages())
	}
	golden.Bytes(t, "scalable-bloom-v1", bloomMustMarshal(t, s))
}

// TestScalableBloomDecodeRejectsUndersizedStage: a stage's bits must be
// what its capacity and target rate size it to, or a few bytes can claim a
// capacity that makes the next Add build a stage of any size: a 90-byte
// encoding of one 2-bit stage "holding" 2^33 keys decoded, and its first
// Add then allocated a stage for 2^34 keys, about 27 GB (F3: decoding never
// allocates more than the input justifies, and neither may the filter it
// returns on its first Add).
func TestScalableBloomDecodeRejectsUndersizedStage(t *testing.T) {
	s, err := NewScalableBloom(1, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	body := append([]byte(nil), enc[envelopeHeaderSize:len(enc)-envelopeTrailer]...)
	// fpRate f64, ratio f64, growth u32, initialN u64 at 20, stages u32,
	// then stage 0: capacity u64 at 32, count u64 at 40, Bloom body.
	const claimed = 1 << 33
	binary.LittleEndian.PutUint64(body[20:], claimed)
	binary.LittleEndian.PutUint64(body[32:], claimed)
	binary.LittleEndian.PutUint64(body[40:], claimed)
	var got ScalableBloom
	err = got.UnmarshalBinary(sealEnvelope(TypeScalableBloom, scalableBloomVersion, body))
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a %d-bit stage claiming %d keys decoded (err %v)", s.Bits(), claimed, err)
	}
}
