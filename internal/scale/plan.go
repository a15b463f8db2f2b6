package scale

// StepRange returns the numbers [from, to) of the objects of a kind of n
// objects that step s (1..steps) writes: each step writes an equal share,
// the last one the remainder.
func StepRange(n int64, steps, s int) (from, to int64) {
	return n * int64(s-1) / int64(steps), n * int64(s) / int64(steps)
}

// Batch is the objects one step writes, every kind mixed: request i of
// the step writes At(i). The order is a fixed permutation, so kinds
// interleave and names arrive in no particular order, as objects are
// created in a cluster.
type Batch struct {
	kinds []int   // kind of each part
	start []int64 // first request of each part
	from  []int64 // first object number of each part
	n     int64
	mul   uint64
}

// NewBatch returns the batch of step s of steps for the counts.
func NewBatch(counts []Count, steps, s int) Batch {
	var b Batch
	for k, c := range counts {
		from, to := StepRange(c.N, steps, s)
		if to == from {
			continue
		}
		b.kinds = append(b.kinds, k)
		b.start = append(b.start, b.n)
		b.from = append(b.from, from)
		b.n += to - from
	}
	b.mul = coprimeNear(b.n)
	return b
}

// Len is the number of objects of the batch.
func (b Batch) Len() int64 { return b.n }

// At returns the kind and number of the object request i writes.
func (b Batch) At(i int64) (kind int, idx int64) {
	p := int64(uint64(i) * b.mul % uint64(b.n))
	j := len(b.start) - 1
	for j > 0 && b.start[j] > p {
		j--
	}
	return b.kinds[j], b.from[j] + p - b.start[j]
}

// coprimeNear returns a multiplier prime to n near n/φ, which spreads
// consecutive requests over the whole batch.
func coprimeNear(n int64) uint64 {
	if n <= 2 {
		return 1
	}
	m := uint64(float64(n) * 0.6180339887)
	for gcd(m, uint64(n)) != 1 {
		m++
	}
	return m
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Updates picks the objects that status updates rewrite during step s: any
// object that exists when the step starts (written by the steps before),
// of a kind that is not leased (events are written once and expire).
type Updates struct {
	kinds []int
	start []int64
	n     int64
	salt  uint64
}

// NewUpdates returns the objects step s of steps may update.
func NewUpdates(counts []Count, steps, s int, state uint64) Updates {
	u := Updates{salt: mix(state ^ uint64(s)<<48)}
	for k, c := range counts {
		if c.Kind.Leased {
			continue
		}
		_, n := StepRange(c.N, steps, s-1)
		if n == 0 {
			continue
		}
		u.kinds = append(u.kinds, k)
		u.start = append(u.start, u.n)
		u.n += n
	}
	return u
}

// Len is the number of objects that may be updated.
func (u Updates) Len() int64 { return u.n }

// At returns the object that update i rewrites (Len must not be 0).
func (u Updates) At(i int64) (kind int, idx int64) {
	p := int64(mix(u.salt^uint64(i)) % uint64(u.n))
	j := len(u.start) - 1
	for j > 0 && u.start[j] > p {
		j--
	}
	return u.kinds[j], p - u.start[j]
}
