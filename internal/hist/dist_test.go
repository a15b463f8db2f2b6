package hist

import (
	"testing"
	"time"
)

func TestBucketsHoldEveryValue(t *testing.T) {
	h := New()
	values := []time.Duration{3 * time.Microsecond, 3 * time.Microsecond, 450 * time.Microsecond, 2 * time.Millisecond, 19 * time.Millisecond}
	for _, v := range values {
		h.Record(v)
	}
	bs := h.Buckets()
	var sum int64
	for i, b := range bs {
		if b.Count <= 0 || b.From > b.To || (i > 0 && b.From <= bs[i-1].To) {
			t.Fatalf("bucket %d is empty or out of order: %+v", i, bs)
		}
		sum += b.Count
	}
	if sum != h.Count() {
		t.Fatalf("buckets hold %d values, histogram %d", sum, h.Count())
	}
	for _, v := range values {
		found := false
		for _, b := range bs {
			found = found || (v >= b.From && v <= b.To)
		}
		if !found {
			t.Errorf("%v is in no bucket: %+v", v, bs)
		}
	}
	if len(bs) != 4 {
		t.Errorf("got %d buckets for 4 distinct values: %+v", len(bs), bs)
	}
}
