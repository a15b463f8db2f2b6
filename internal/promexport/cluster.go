package promexport

import (
	"context"
	"fmt"
	"math"
	"time"
)

// PeakDemand is the peak write demand of the cluster that the Prometheus
// at url scrapes, over since before now: the p99 of its 1-minute rates of
// committed proposals (a peak that recurs), with words saying where it
// came from, for doctor --demand-from.
func PeakDemand(ctx context.Context, conn Options, since string) (float64, string, error) {
	tr := TimeRange{End: "now", Since: since, DefaultPoints: 1000}
	r, err := tr.Resolve(time.Now())
	if err != nil {
		return 0, "", err
	}
	c, err := New(conn)
	if err != nil {
		return 0, "", err
	}
	d, err := c.Demand(ctx, r, "", time.Minute)
	if err != nil {
		return 0, "", err
	}
	return d.ProposalsP99, fmt.Sprintf("p99 of the 1-minute rates of committed proposals over %s at %s, max %.0f/s", since, conn.URL, d.ProposalsMax), nil
}

// ClusterDBSize is the database size of the cluster that the Prometheus at
// conn scrapes, for doctor's --db-size from-prometheus: the largest any
// member had in use over since before now (else its file's size, where
// etcd exports no in-use figure), with words saying so.
func ClusterDBSize(ctx context.Context, conn Options, since string) (int64, string, error) {
	c, r, err := sizesRange(conn, since)
	if err != nil {
		return 0, "", err
	}
	d, err := c.DBSize(ctx, r, "")
	if err != nil {
		return 0, "", err
	}
	if d.Bytes <= 0 {
		return 0, "", fmt.Errorf("the cluster's database was empty over %s", since)
	}
	what := "the largest in use on a member"
	if !d.InUse {
		what = "the largest database file of a member (etcd exports no in-use size: free pages count too)"
	}
	return int64(d.Bytes), fmt.Sprintf("%s over %s at %s", what, since, conn.URL), nil
}

// ClusterMeanWrite is the mean write size of the cluster that the
// Prometheus at conn scrapes, for doctor's --value-size from-prometheus:
// the bytes a member wrote to its WAL per proposal it committed over
// since before now (its keys and etcd's framing included), with words
// saying so.
func ClusterMeanWrite(ctx context.Context, conn Options, since string) (int, string, error) {
	c, r, err := sizesRange(conn, since)
	if err != nil {
		return 0, "", err
	}
	m, err := c.MeanWrite(ctx, r, "")
	if err != nil {
		return 0, "", err
	}
	if m.Writes <= 0 {
		return 0, "", fmt.Errorf("the cluster committed no writes over %s: there is no mean write size to take", since)
	}
	return max(int(math.Round(m.Bytes)), 1), fmt.Sprintf("the cluster's mean write over %s at %s: the bytes etcd wrote to its WAL per committed write, "+
		"its keys and etcd's framing included, so each put here writes its own key more", since, conn.URL), nil
}

// sizesRange is since before now, to the second (not aligned on a step
// as a table's rows are: the last scrapes count).
func sizesRange(conn Options, since string) (*Client, Resolved, error) {
	d, err := ParseDuration(since)
	if err != nil {
		return nil, Resolved{}, fmt.Errorf("--demand-since: %w", err)
	}
	now := time.Now()
	c, err := New(conn)
	return c, Resolved{Start: now.Add(-d), End: now, Step: time.Second}, err
}
