package hist

import "time"

// Bucket is one range of latencies of the histogram and how many recorded
// values fell in it.
type Bucket struct {
	From, To time.Duration
	Count    int64
}

// Buckets returns the histogram's non-empty buckets, in increasing order of
// latency. Their counts add up to Count; their width is the histogram's
// precision (0.1 % of the value), so callers that draw them usually fold
// them into wider bins.
func (h *Histogram) Buckets() []Bucket {
	var out []Bucket
	for _, b := range h.h.Distribution() {
		if b.Count > 0 {
			out = append(out, Bucket{From: time.Duration(b.From), To: time.Duration(b.To), Count: b.Count})
		}
	}
	return out
}
