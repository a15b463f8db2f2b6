package hist

import "time"

// CountsAtOrBelow returns, for each bound (ascending), how many recorded
// values are at or below it, to the histogram's precision: values that
// share a bound's HDR bucket count as at or below it. It walks the
// histogram once.
func (h *Histogram) CountsAtOrBelow(bounds []time.Duration) []int64 {
	out := make([]int64, len(bounds))
	if h.count == 0 {
		return out
	}
	dist := h.h.Distribution()
	var n int64
	j := 0
	for i, b := range bounds {
		v := int64(b)
		switch {
		case v < h.min:
			out[i] = 0
			continue
		case v >= h.max:
			out[i] = h.count
			continue
		}
		for j < len(dist) && dist[j].From <= v {
			n += dist[j].Count
			j++
		}
		out[i] = min(n, h.count)
	}
	return out
}
