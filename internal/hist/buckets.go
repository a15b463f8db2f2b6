package hist

import "time"

// CountAtOrBelow returns how many recorded values are at or below v, to
// the histogram's precision: values that share v's HDR bucket count as at
// or below it.
func (h *Histogram) CountAtOrBelow(v time.Duration) int64 {
	if h.count == 0 || int64(v) < h.min {
		return 0
	}
	if int64(v) >= h.max {
		return h.count
	}
	var n int64
	for _, b := range h.h.Distribution() {
		if b.From > int64(v) {
			break
		}
		n += b.Count
	}
	return min(n, h.count)
}
