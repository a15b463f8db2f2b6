package load

import (
	"math"
	"testing"
)

// The description says which keys the puts write in words, not the key
// space's number when that number means "one key" or "every key".
func TestDescribeKeySpace(t *testing.T) {
	for n, want := range map[int]string{
		1:           "puts of 8-byte keys and 256-byte values, all to the same key",
		math.MaxInt: "puts of 8-byte keys and 256-byte values, a new random key each time",
		1000:        "puts of 8-byte keys and 256-byte values, random keys over a key space of 1000",
	} {
		o := Options{Workload: Put, KeySize: 8, ValSize: 256, KeySpaceSize: n}
		if got := o.Describe(); got != want {
			t.Errorf("key space %d: %q, want %q", n, got, want)
		}
	}
}
