// Package result defines the Result document, the stable JSON contract
// (schema "etcdperf/v1") that every etcdperf command produces and that
// `report` and `compare` read back.
//
// Durations are seconds (float64), rates are per second, sizes are bytes.
// Fields may be added freely; renaming or removing one needs a new schema.
//
// Design. A Result is one run of one command (Kind, kinds.go) against one
// target; doctor and compare hold one Result per target in Runs. It has
// two halves:
//
//   - what was measured: the sections (Disk, Bench, Server, Host, Logs,
//     Prom, Scale, Kube, Metrics, Perf, Datascale, Doctor, Capacity,
//     Discover), filled by package pipeline. perf.go holds the sections of
//     check (Perf), check datascale and doctor;
//   - its judgement: Checks, Findings, Verdict, Summary and Limits (the
//     levels changed with --limit), set by package judge from the sections
//     alone, so that a Result read back is judged the same again.
//
// A run that ended early keeps what it measured, says why in Error and is
// Incomplete whatever its checks say (MarkIncomplete). io.go writes and reads the document (Encode, Decode,
// WriteFile atomically, ReadFile; Decode fills what earlier versions kept
// elsewhere). This package is data and its JSON: no limits, no
// conclusions, and no wording but the cause table (cause.go): each Cause's
// noun, remedy, finding and verdict words sit beside its JSON name, in one
// entry that judge, diagnose and render read (TestCauseTable fails on a
// cause without one). A Check here is one criterion as judged (see
// package limits); KindCheck is the `check` command's Result.
package result
