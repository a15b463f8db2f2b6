package lab

import (
	"context"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
)

// bucket is a burst bucket's state: the credits left and whether the cap
// is at the burst rate.
type bucket struct {
	burst, baseline, max float64
	credits              float64
	bursting             bool
}

func newBucket(f Fault) *bucket {
	return &bucket{burst: float64(f.BurstIOPS), baseline: float64(f.BaselineIOPS), max: float64(f.BurstCredits), credits: float64(f.BurstCredits), bursting: true}
}

// spend books writes done over secs: credits earned at the baseline,
// spent one a write (so that writes at the baseline keep the balance), up
// to the bucket's maximum. It returns the cap the writes get now: the
// burst rate while credits last, the baseline once they are spent, the
// burst again once a tenth of a second's burst above the baseline has
// been earned back.
func (b *bucket) spend(writes, secs float64) int64 {
	b.credits = min(b.max, max(0, b.credits+b.baseline*secs-writes))
	switch {
	case b.bursting && b.credits <= 0:
		b.bursting = false
	case !b.bursting && b.credits >= (b.burst-b.baseline)*BucketTick.Seconds():
		b.bursting = true
	}
	if b.bursting {
		return int64(b.burst)
	}
	return int64(b.baseline)
}

// runBucket drives the cap of group g on dev's writes by a burst bucket
// (f.BurstIOPS, BaselineIOPS, BurstCredits) from the group's own I/O
// counters, read every BucketTick, until ctx ends; the cap is rewritten
// only when it changes. A counter it cannot read leaves the cap as it is.
func runBucket(ctx context.Context, g *cgroup.Limited, dev cgroup.Device, f Fault) {
	b := newBucket(f)
	prev, err := g.IOStat(dev)
	if err != nil {
		return
	}
	cur := f.BurstIOPS
	t := time.NewTicker(BucketTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := g.IOStat(dev)
		if err != nil {
			continue
		}
		writes := 0.0
		if st.WriteOps >= prev.WriteOps {
			writes = float64(st.WriteOps - prev.WriteOps)
		}
		next := b.spend(writes, st.At.Sub(prev.At).Seconds())
		prev = st
		if next != cur && g.SetIOLimit(dev, cgroup.IOLimit{WriteIOPS: next}) == nil {
			cur = next
		}
	}
}
