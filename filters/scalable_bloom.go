package filters

import (
	"fmt"
	"math"
	"math/bits"
)

// Scalable Bloom defaults. The scheme is Almeida, Baquero, Preguiça and
// Hutchison, "Scalable Bloom Filters" (2007). Growth x2 is their s = 2 and
// keeps the number of stages logarithmic in the number of keys. They favour
// ratios of 0.8–0.9 for long chains; we default to 0.5, which makes the first stages cheaper (stage 0 targets p/2 rather than
// p/10 at 0.9) and costs about one more probe per later stage.
const (
	DefaultScalableTighteningRatio = 0.5
	DefaultScalableGrowthFactor    = 2
	// scalableBloomMaxGrowth bounds the growth factor so stage capacities stay
	// far from overflow for any realistic chain.
	scalableBloomMaxGrowth = 64
)

// scalableBloomVersion is the body format version of a ScalableBloom encoding.
//
//	1: fpRate (f64), ratio (f64), growth (u32), initialN (u64), stages (u32),
//	   then per stage: capacity (u64), count (u64), a Bloom body.
const scalableBloomVersion = 1

// ScalableBloomOptions tunes NewScalableBloomWithOptions.
type ScalableBloomOptions struct {
	// TighteningRatio r in (0, 1): stage i targets fpRate·(1-r)·r^i, so the
	// stage targets sum to fpRate for any number of stages.
	TighteningRatio float64
	// GrowthFactor g >= 2: stage i holds initialN·g^i keys.
	GrowthFactor int
}

// ScalableBloom is a Bloom filter without a fixed capacity: a chain of
// standard Bloom stages, the newest taking adds. When the newest stage holds
// its capacity a new stage is started, GrowthFactor times larger and with a
// false-positive target TighteningRatio times tighter. A key is reported
// present if any stage reports it, so the compound false-positive rate is
// 1 - Π(1 - p_i) <= Σ p_i = fpRate·(1-r)·Σ r^i < fpRate, however many keys go
// in (invariant F4; TestScalableBloomFPRate).
//
// Adds are not deduplicated: re-adding a key uses capacity. Not safe for
// concurrent mutation. The zero value answers "maybe" for every key and
// cannot be marshalled or added to.
type ScalableBloom struct {
	stages   []scalableBloomStage
	fpRate   float64
	ratio    float64
	growth   int
	initialN int
}

type scalableBloomStage struct {
	bloom    *Bloom
	capacity uint64 // keys this stage is sized for
	count    uint64 // keys added to it, <= capacity
}

// NewScalableBloom returns an empty scalable Bloom filter whose first stage
// holds initialN keys and whose compound false-positive rate stays below
// fpRate for any number of keys, with the default ratio 0.5 and growth x2.
func NewScalableBloom(initialN int, fpRate float64) (*ScalableBloom, error) {
	return NewScalableBloomWithOptions(initialN, fpRate, ScalableBloomOptions{
		TighteningRatio: DefaultScalableTighteningRatio,
		GrowthFactor:    DefaultScalableGrowthFactor,
	})
}

// NewScalableBloomWithOptions is NewScalableBloom with a chosen tightening
// ratio and growth factor.
func NewScalableBloomWithOptions(initialN int, fpRate float64, opts ScalableBloomOptions) (*ScalableBloom, error) {
	if err := checkSizing(initialN, fpRate); err != nil {
		return nil, fmt.Errorf("filters: NewScalableBloom: %w", err)
	}
	if !(opts.TighteningRatio > 0 && opts.TighteningRatio < 1) {
		return nil, fmt.Errorf("filters: NewScalableBloom: %w",
			invalidf("tightening ratio must be in (0, 1), got %v", opts.TighteningRatio))
	}
	if opts.GrowthFactor < 2 || opts.GrowthFactor > scalableBloomMaxGrowth {
		return nil, fmt.Errorf("filters: NewScalableBloom: %w",
			invalidf("growth factor must be in [2, %d], got %d", scalableBloomMaxGrowth, opts.GrowthFactor))
	}
	s := &ScalableBloom{
		fpRate:   fpRate,
		ratio:    opts.TighteningRatio,
		growth:   opts.GrowthFactor,
		initialN: initialN,
	}
	st, err := s.newStage(0)
	if err != nil {
		return nil, fmt.Errorf("filters: NewScalableBloom: %w", err)
	}
	s.stages = append(s.stages, st)
	return s, nil
}

// stageCapacity returns initialN·growth^i, or ok=false if it overflows.
func (s *ScalableBloom) stageCapacity(i int) (uint64, bool) {
	c := uint64(s.initialN)
	for ; i > 0; i-- {
		hi, lo := bits.Mul64(c, uint64(s.growth))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		c = lo
	}
	return c, true
}

// stageFPRate returns fpRate·(1-r)·r^i, stage i's target.
func (s *ScalableBloom) stageFPRate(i int) float64 {
	return s.fpRate * (1 - s.ratio) * math.Pow(s.ratio, float64(i))
}

func (s *ScalableBloom) newStage(i int) (scalableBloomStage, error) {
	capacity, ok := s.stageCapacity(i)
	if !ok {
		return scalableBloomStage{}, invalidf("stage %d capacity overflows", i)
	}
	m, k, err := bloomSizing(int(capacity), s.stageFPRate(i))
	if err != nil {
		return scalableBloomStage{}, fmt.Errorf("stage %d: %w", i, err)
	}
	return scalableBloomStage{bloom: newBloomMK(m, k), capacity: capacity}, nil
}

// Add inserts key.
func (s *ScalableBloom) Add(key []byte) { s.AddHash(Hash(key)) }

// AddHash inserts the key whose Hash is h, starting a new stage first if the
// newest is at capacity. If a new stage cannot be built (a capacity or size
// limit that needs around 2^40 keys to reach) the key goes into the newest
// stage anyway: its false-positive rate then rises, but no key is lost.
func (s *ScalableBloom) AddHash(h uint64) {
	if len(s.stages) == 0 {
		return
	}
	last := &s.stages[len(s.stages)-1]
	if last.count >= last.capacity {
		if st, err := s.newStage(len(s.stages)); err == nil {
			s.stages = append(s.stages, st)
			last = &s.stages[len(s.stages)-1]
		}
	}
	last.bloom.AddHash(h)
	if last.count < last.capacity {
		last.count++
	}
}

// MayContain reports false only if key was definitely never added.
func (s *ScalableBloom) MayContain(key []byte) bool { return s.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash is h. Stages are probed
// newest first: the newest are the largest and hold most keys.
func (s *ScalableBloom) MayContainHash(h uint64) bool {
	if len(s.stages) == 0 {
		return true
	}
	for i := len(s.stages) - 1; i >= 0; i-- {
		if s.stages[i].bloom.MayContainHash(h) {
			return true
		}
	}
	return false
}

// Stages returns the number of Bloom stages in the chain.
func (s *ScalableBloom) Stages() int { return len(s.stages) }

// Bits returns the total number of bits over all stages.
func (s *ScalableBloom) Bits() uint64 {
	var m uint64
	for _, st := range s.stages {
		m += st.bloom.Bits()
	}
	return m
}

// FillRatio returns the fraction of set bits over all stages. It is 0 when
// empty and non-decreasing under Add except when a new, empty stage starts.
func (s *ScalableBloom) FillRatio() float64 {
	var set, m uint64
	for _, st := range s.stages {
		set += st.bloom.bits.count()
		m += st.bloom.m
	}
	if m == 0 {
		return 0
	}
	return float64(set) / float64(m)
}

// EstimatedFPRate returns 1 - Π(1 - f_i^k_i) over the stages, the exact
// false-positive probability of the chain as it is now (a never-added key is
// a false positive unless every stage rejects it).
func (s *ScalableBloom) EstimatedFPRate() float64 {
	miss := 1.0
	for _, st := range s.stages {
		miss *= 1 - st.bloom.EstimatedFPRate()
	}
	return 1 - miss
}

// MarshalBinary returns the encoding of the whole chain (docs/format.md,
// "Scalable Bloom").
func (s *ScalableBloom) MarshalBinary() ([]byte, error) {
	if len(s.stages) == 0 {
		return nil, invalidf("filters: ScalableBloom.MarshalBinary: zero-value filter")
	}
	var w bodyWriter
	w.f64(s.fpRate)
	w.f64(s.ratio)
	w.u32(uint32(s.growth))
	w.u64(uint64(s.initialN))
	w.u32(uint32(len(s.stages)))
	for _, st := range s.stages {
		w.u64(st.capacity)
		w.u64(st.count)
		st.bloom.appendBody(&w)
	}
	return scalableBloomCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces s with the chain encoded in data. On error s is
// unchanged and the error wraps ErrCorrupt.
func (s *ScalableBloom) UnmarshalBinary(data []byte) error {
	return scalableBloomCodec.unmarshal(s, data)
}

// scalableBloomMinStageBytes is the smallest encoded stage: capacity, count, m, k
// and one bit word. It bounds the stage count a body of a given length can
// claim before anything is allocated (invariant F3).
const scalableBloomMinStageBytes = 8 + 8 + 8 + 4 + 8

var scalableBloomCodec = newCodec(TypeScalableBloom, scalableBloomVersion, "scalable bloom", decodeScalableBloom)

func decodeScalableBloom(r *bodyReader) (*ScalableBloom, error) {
	s := &ScalableBloom{}
	s.fpRate = r.f64("scalable bloom fpRate")
	s.ratio = r.f64("scalable bloom ratio")
	growth := r.u32("scalable bloom growth")
	initialN := r.u64("scalable bloom initialN")
	nStages := r.u32("scalable bloom stage count")
	r.check(s.fpRate > 0 && s.fpRate < 1, "scalable bloom: fpRate %v outside (0, 1)", s.fpRate)
	r.check(s.ratio > 0 && s.ratio < 1, "scalable bloom: ratio %v outside (0, 1)", s.ratio)
	r.check(growth >= 2 && growth <= scalableBloomMaxGrowth, "scalable bloom: growth %d outside [2, %d]", growth, scalableBloomMaxGrowth)
	r.check(initialN >= 1 && initialN <= math.MaxInt64, "scalable bloom: initialN %d out of range", initialN)
	r.check(nStages >= 1 && uint64(nStages) <= uint64(len(r.buf))/scalableBloomMinStageBytes,
		"scalable bloom: %d stages cannot fit in %d bytes", nStages, len(r.buf))
	if r.fail != nil {
		return nil, r.fail
	}
	s.growth, s.initialN = int(growth), int(initialN)
	s.stages = make([]scalableBloomStage, 0, nStages)
	for i := 0; i < int(nStages); i++ {
		capacity := r.u64("scalable bloom stage capacity")
		count := r.u64("scalable bloom stage count")
		want, ok := s.stageCapacity(i)
		r.check(ok && capacity == want, "scalable bloom: stage %d capacity %d, want initialN·growth^%d", i, capacity, i)
		r.check(count <= capacity, "scalable bloom: stage %d holds %d keys, capacity %d", i, count, capacity)
		r.check(i == int(nStages)-1 || count == capacity,
			"scalable bloom: stage %d is not full (%d of %d) but a later stage exists", i, count, capacity)
		if r.fail != nil {
			return nil, r.fail
		}
		b, err := readBloomBody(r)
		if err != nil {
			return nil, fmt.Errorf("scalable bloom: stage %d: %w", i, err)
		}
		// A stage has the bits its capacity and target size it to (half
		// of them at least, leaving float rounding on another platform
		// room), so the capacity, and the next stage Add builds from it,
		// is paid for by bytes of the input (F3).
		wantM, _, err := bloomSizing(int(capacity), s.stageFPRate(i))
		if err != nil || b.m < wantM/2 {
			return nil, corruptf("scalable bloom: stage %d has %d bits, too few for %d keys at rate %v",
				i, b.m, capacity, s.stageFPRate(i))
		}
		s.stages = append(s.stages, scalableBloomStage{bloom: b, capacity: capacity, count: count})
	}
	if err := r.finish(); err != nil {
		return nil, fmt.Errorf("scalable bloom: %w", err)
	}
	return s, nil
}
