package pipeline

import "testing"

// A sweep's clients grow with the rate as check perf's profiles do: the
// profiles' own at their rates, between them on the log of the rate.
func TestClientsFor(t *testing.T) {
	for r, want := range map[float64]int{10: 50, 150: 50, 1000: 200, 2000: 300, 4000: 400, 8000: 500, 15000: 1000, 30000: 1000} {
		if got := clientsFor(r); got != want {
			t.Errorf("clientsFor(%g) = %d, want %d", r, got, want)
		}
	}
}
