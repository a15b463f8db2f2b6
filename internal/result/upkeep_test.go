package result

import "testing"

// What etcd's defragmentation histogram tells of the longest: a log's
// duration as it is; a bucket's bounds (from 0 for the lowest), narrowed
// by the sum (the longest took at least the mean, at most the sum), and
// the sum itself for one defragmentation.
func TestDefragsLongestBounds(t *testing.T) {
	for _, c := range []struct {
		name   string
		d      Defrags
		lo, hi float64
	}{
		{"a log's", Defrags{Count: 3, Seconds: 55, Longest: 21}, 21, 21},
		{"one in a bucket", Defrags{Count: 1, Seconds: 0.000957, Longest: 0.1, Bucketed: true}, 0.000957, 0.000957},
		{"three in the lowest bucket", Defrags{Count: 3, Seconds: 0.03, Longest: 0.1, Bucketed: true}, 0.01, 0.03},
		{"two, the longest in (6.4s, 12.8s]", Defrags{Count: 2, Seconds: 20, Longest: 12.8, Bucketed: true}, 10, 12.8},
		{"four, the longest in (6.4s, 12.8s]", Defrags{Count: 4, Seconds: 16, Longest: 12.8, Bucketed: true}, 6.4, 12.8},
		{"no sum", Defrags{Count: 2, Longest: 0.4, Bucketed: true}, 0.2, 0.4},
	} {
		if lo, hi := c.d.LongestBounds(); lo != c.lo || hi != c.hi {
			t.Errorf("%s: %v-%v, want %v-%v", c.name, lo, hi, c.lo, c.hi)
		}
	}
}
