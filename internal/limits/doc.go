// Package limits judges measurements against the limits the etcd community
// uses. The limits are data (Table), each with its source; Evaluate is a
// pure function of the observed values.
//
// Design. Table is every limit etcdperf judges by: the criteria judged as
// checks of their own (criteria.go), then the levels the findings of
// package diagnose read (levels.go), each with its ID (the name --limit
// takes), its limit, an optional warning level and its source. Override
// applies --limit, Changed and WithLimits carry the changed levels through
// a Result (Result.Limits), and docs/limits.md's table is generated from
// Table (docs_test.go fails when they disagree). Also here: the windows in
// which a Prometheus history passes a criterion (breach.go); the load
// profiles are package profile's. This package holds the limits and
// compares; which measurement a criterion applies to is mostly package
// judge's choice.
package limits
