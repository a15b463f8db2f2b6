package fio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Report is the part of fio's --output-format=json that etcdperf uses.
type Report struct {
	Version string `json:"fio version"`
	Jobs    []Job  `json:"jobs"`
}

// Job is one job (or, with group_reporting, the group) of a fio report.
type Job struct {
	Name       string  `json:"jobname"`
	Error      int     `json:"error"`
	Write      IOStats `json:"write"`
	Sync       Sync    `json:"sync"`
	JobRuntime int64   `json:"job_runtime"` // milliseconds
}

// IOStats are fio's statistics for one direction of I/O.
type IOStats struct {
	IOBytes   int64   `json:"io_bytes"`
	BWBytes   float64 `json:"bw_bytes"`
	IOPS      float64 `json:"iops"`
	Runtime   int64   `json:"runtime"` // milliseconds
	TotalIOs  int64   `json:"total_ios"`
	CompLat   LatNS   `json:"clat_ns"`
	TotalLat  LatNS   `json:"lat_ns"`
	ShortIOs  int64   `json:"short_ios"`
	DroppedIO int64   `json:"drop_ios"`
}

// Sync holds fio's fsync/fdatasync latencies.
type Sync struct {
	TotalIOs int64 `json:"total_ios"`
	Lat      LatNS `json:"lat_ns"`
}

// LatNS is a latency summary in nanoseconds.
type LatNS struct {
	Min         float64            `json:"min"`
	Max         float64            `json:"max"`
	Mean        float64            `json:"mean"`
	Stddev      float64            `json:"stddev"`
	N           int64              `json:"N"`
	Percentiles map[string]float64 `json:"percentile"`
}

// Percentile returns the value fio reported for percentile p (e.g. 99.9).
func (l LatNS) Percentile(p float64) (float64, bool) {
	v, ok := l.Percentiles[strconv.FormatFloat(p, 'f', 6, 64)]
	return v, ok
}

// Parse reads fio's JSON output. fio may print notes before the JSON
// document; they are skipped.
func Parse(out []byte) (*Report, error) {
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return nil, fmt.Errorf("no JSON in fio's output")
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(out[i:]))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("cannot read fio's JSON output: %w", err)
	}
	if len(r.Jobs) == 0 {
		return nil, fmt.Errorf("fio's JSON output has no jobs")
	}
	return &r, nil
}
