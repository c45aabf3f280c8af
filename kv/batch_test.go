package kv

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

func TestBatchRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 200; trial++ {
		b := newBatch()
		type op struct {
			kind base.Kind
			k, v []byte
		}
		var ops []op
		for i := rng.IntN(30); i > 0; i-- {
			k := randBytes(rng, rng.IntN(20))
			if rng.IntN(3) == 0 {
				b.Delete(k)
				ops = append(ops, op{kind: base.KindDelete, k: k})
			} else {
				v := randBytes(rng, rng.IntN(100))
				b.Set(k, v)
				ops = append(ops, op{kind: base.KindSet, k: k, v: v})
			}
		}
		b.setSeq(base.SeqNum(1000 + trial))
		i := 0
		first, count, err := decodeBatch(b.data, func(seq base.SeqNum, e batchEntry) error {
			o := ops[i]
			if seq != base.SeqNum(1000+trial+i) || e.Kind != o.kind || !bytes.Equal(e.Key, o.k) || !bytes.Equal(e.Value, o.v) {
				t.Fatalf("entry %d: got (%d, %v, %q, %q), want (%v, %q, %q)", i, seq, e.Kind, e.Key, e.Value, o.kind, o.k, o.v)
			}
			i++
			return nil
		})
		if err != nil || first != base.SeqNum(1000+trial) || int(count) != len(ops) || i != len(ops) {
			t.Fatalf("decode: first %d count %d visited %d err %v; want %d entries", first, count, i, err, len(ops))
		}
	}
}

func TestBatchDecodeRejectsDamage(t *testing.T) {
	b := newBatch()
	b.Set([]byte("key"), []byte("value"))
	b.Delete([]byte("gone"))
	b.setSeq(5)
	for n := 0; n < len(b.data); n++ {
		if _, _, err := decodeBatch(b.data[:n], nil); !errors.Is(err, ErrCorruption) {
			t.Fatalf("truncated to %d bytes: err = %v, want ErrCorruption", n, err)
		}
	}
	extra := append(bytes.Clone(b.data), 0)
	if _, _, err := decodeBatch(extra, nil); !errors.Is(err, ErrCorruption) {
		t.Fatalf("trailing byte: err = %v", err)
	}
	badKind := bytes.Clone(b.data)
	badKind[batchHeaderLen] = 9
	if _, _, err := decodeBatch(badKind, nil); !errors.Is(err, ErrCorruption) {
		t.Fatalf("bad kind: err = %v", err)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	b := newBatch()
	b.Set([]byte("a"), []byte("1"))
	b.Delete([]byte("b"))
	b.Set(nil, nil)
	b.DeleteRange([]byte("c"), []byte("e"))
	b.setSeq(42)
	f.Add(b.data)
	f.Add([]byte{})
	f.Add(make([]byte, batchHeaderLen))
	f.Fuzz(func(t *testing.T, data []byte) {
		var total int
		_, count, err := decodeBatch(data, func(seq base.SeqNum, e batchEntry) error {
			total += len(e.Key) + len(e.Value)
			return nil
		})
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("error %v does not wrap ErrCorruption", err)
			}
			return
		}
		// A batch that decodes is re-encoded identically by the builder.
		rb := newBatch()
		decodeBatch(data, func(seq base.SeqNum, e batchEntry) error {
			rb.add(e.Kind, e.Key, e.Value)
			return nil
		})
		rb.setSeq(base.SeqNum(0))
		copy(rb.data[:8], data[:8])
		if int(count) != rb.Count() || !bytes.Equal(rb.data, data) {
			t.Fatalf("decoded batch does not re-encode to its bytes")
		}
		if total > len(data) {
			t.Fatalf("decoded %d bytes of keys and values from %d bytes", total, len(data))
		}
	})
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
