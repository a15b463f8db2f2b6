// Package merge combines the Results of the shards of one load (the pods of
// an indexed Job, each with its own key prefix and a share of the rate) into
// the Result of the whole load. Latencies merge exactly through their HDR
// histograms: averaging percentiles would be wrong.
package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/hist"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/result"
)

// InputError says which input (0-based, in the order given) could not be
// merged.
type InputError struct {
	Index int
	Err   error
}

func (e *InputError) Error() string { return fmt.Sprintf("result %d: %v", e.Index+1, e.Err) }

func (e *InputError) Unwrap() error { return e.Err }

// Results merges the bench Results of the shards of one load:
//   - ops and errors add up; throughput adds up (the shards ran at the same
//     time, each at its share of the rate); the load's seconds are the
//     longest shard's;
//   - latency and service_latency merge exactly through their HDR
//     histograms, so a Result without one cannot be merged;
//   - the per-second series are aligned on the second their t falls in
//     (the shards' samplers do not tick together): ops and errors add up,
//     max is the largest, and p50/p99 are the largest of the shards', an
//     upper bound of the merged quantile (a mixture's quantile never exceeds
//     its largest component's);
//   - env and params keep the values all shards agree on, and params gains
//     "merged_results", the number of shards;
//   - the server sections are not merged (each shard scraped the same
//     cluster over its own window) and are left out, as are checks and
//     findings, which are judged again on the merged data.
//
// The merged Result carries HDR histograms again, so it can be merged
// further.
func Results(rs []*result.Result) (*result.Result, error) {
	if len(rs) < 2 {
		return nil, fmt.Errorf("merging needs at least two Results, got %d", len(rs))
	}
	for i, r := range rs {
		if r.Bench == nil {
			return nil, &InputError{i, fmt.Errorf("a %s Result without a bench section: only the shards of one load (bench Results) can be merged; to compare runs, list them without --merge", r.Kind)}
		}
		if r.Kind != rs[0].Kind {
			return nil, &InputError{i, fmt.Errorf("a %s Result cannot be merged with a %s Result", r.Kind, rs[0].Kind)}
		}
	}
	out := &result.Result{
		Schema:   result.Schema,
		Kind:     rs[0].Kind,
		Tool:     rs[0].Tool,
		Started:  rs[0].Started,
		Finished: rs[0].Finished,
		Name:     fmt.Sprintf("merged (%d results)", len(rs)),
	}
	var errs []string
	for i, r := range rs {
		if r.Started.Before(out.Started) {
			out.Started = r.Started
		}
		if r.Finished.After(out.Finished) {
			out.Finished = r.Finished
		}
		if r.Error != "" {
			errs = append(errs, fmt.Sprintf("result %d: %s", i+1, r.Error))
		}
	}
	out.Error = strings.Join(errs, "; ")
	env, err := commonEnv(rs)
	if err != nil {
		return nil, err
	}
	out.Env = env
	out.Params = commonParams(rs)
	if out.Bench, err = mergeBench(rs); err != nil {
		return nil, err
	}
	if out.Kind == result.KindBench {
		// Judged as one run is, by the limits the shards were judged by.
		judge.Judge(out, judge.Criteria(rs...))
	} else {
		// A merge keeps only the load of other kinds (a check's or a
		// datascale's own sections are not merged): its findings only.
		out.Findings = diagnose.Run(out)
		out.Verdict = diagnose.Verdict(nil, out.Findings)
		out.MarkIncomplete()
	}
	return out, nil
}

func mergeBench(rs []*result.Result) (*result.Bench, error) {
	b := &result.Bench{}
	var workloads []string
	for _, r := range rs {
		rb := r.Bench
		if !slices.Contains(workloads, rb.Workload) {
			workloads = append(workloads, rb.Workload)
		}
		b.Ops += rb.Ops
		b.Throughput += rb.Throughput
		b.Seconds = max(b.Seconds, rb.Seconds)
		b.ClientCPU += rb.ClientCPU / float64(len(rs))
		for k, v := range rb.Errors {
			if b.Errors == nil {
				b.Errors = map[string]int64{}
			}
			b.Errors[k] += v
		}
	}
	sort.Strings(workloads)
	b.Workload = strings.Join(workloads, "+")
	var err error
	if b.Latency, err = mergeLatency(rs, "latency", func(b *result.Bench) *result.Latency { return b.Latency }); err != nil {
		return nil, err
	}
	if b.ServiceLatency, err = mergeLatency(rs, "service_latency", func(b *result.Bench) *result.Latency { return b.ServiceLatency }); err != nil {
		return nil, err
	}
	b.Series = mergeSeries(rs)
	return b, nil
}

// mergeLatency merges one latency of every shard; it is absent from the
// merged Result only when it is absent from every shard.
func mergeLatency(rs []*result.Result, name string, get func(*result.Bench) *result.Latency) (*result.Latency, error) {
	var sum *hist.Histogram
	present := 0
	for _, r := range rs {
		if get(r.Bench) != nil {
			present++
		}
	}
	if present == 0 {
		return nil, nil
	}
	for i, r := range rs {
		l := get(r.Bench)
		if l == nil {
			return nil, &InputError{i, fmt.Errorf("bench.%s is missing while other Results have it", name)}
		}
		if l.Count == 0 {
			continue
		}
		h, err := hist.FromLatency(*l)
		if err != nil {
			return nil, &InputError{i, fmt.Errorf("bench.%s cannot be merged exactly: %w", name, err)}
		}
		if sum == nil {
			sum = h
		} else {
			sum.Merge(h)
		}
	}
	if sum == nil {
		return &result.Latency{}, nil
	}
	l := sum.Latency(true)
	return &l, nil
}

// mergeSeries adds up the shards' samples of the same second. A sample's
// t is when its interval ended: the sampler's tick, a little after a whole
// second of the shard's run, or the run's end for the last, partial one.
// So a sample belongs to second round(t), or to the second after the
// shard's previous sample when that is later (a last interval shorter
// than half a second). The merged t is the latest of the shards'.
func mergeSeries(rs []*result.Result) []result.Sample {
	bySecond := map[int64]*result.Sample{}
	for _, r := range rs {
		prev := int64(-1)
		for _, s := range r.Bench.Series {
			n := max(int64(math.Round(s.T)), prev+1)
			prev = n
			m, ok := bySecond[n]
			if !ok {
				m = &result.Sample{T: s.T}
				bySecond[n] = m
			}
			m.T = max(m.T, s.T)
			m.Ops += s.Ops
			m.Err += s.Err
			m.P50 = max(m.P50, s.P50)
			m.P99 = max(m.P99, s.P99)
			m.Max = max(m.Max, s.Max)
		}
	}
	var out []result.Sample
	for _, n := range slices.Sorted(maps.Keys(bySecond)) {
		out = append(out, *bySecond[n])
	}
	return out
}

// commonEnv keeps the environment fields whose values all Results share.
func commonEnv(rs []*result.Result) (*result.Env, error) {
	var common map[string]any
	for _, r := range rs {
		if r.Env == nil {
			return nil, nil
		}
		b, err := json.Marshal(r.Env)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		common = intersect(common, m)
	}
	b, err := json.Marshal(common)
	if err != nil {
		return nil, err
	}
	var env result.Env
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, errors.Join(errors.New("merge the environments"), err)
	}
	return &env, nil
}

func commonParams(rs []*result.Result) map[string]any {
	var common map[string]any
	for _, r := range rs {
		common = intersect(common, r.Params)
	}
	if common == nil {
		common = map[string]any{}
	}
	common["merged_results"] = len(rs)
	return common
}

// intersect returns the entries of b that a also has with an equal value;
// a nil a stands for "everything" (the first Result).
func intersect(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range b {
		if av, ok := a[k]; a == nil || ok && reflect.DeepEqual(av, v) {
			out[k] = v
		}
	}
	return out
}
