// Package diagnose draws conclusions from everything a run collected. Each
// rule is a pure function of the Result; each finding carries its evidence
// and a recommendation taken from the field.
//
// Design. Each file registers the rules of its domain (disk, host, logs,
// metrics, scale, the check command's load, ...) with Register from an
// init function; Run applies them all and sorts the findings, most severe
// first, and Verdict combines them with the checks (a critical finding
// fails, a warning warns). A rule's levels are check.Table's as the run
// was judged by them (Level, LimitOf), so --limit reaches them and
// a finding quotes the level as the limit of its evidence. Rules read the
// members through Members (member.go), one view of each member whichever
// command saw it, so that each rule is written once: cause.go names what
// limits each member (its disk, its CPU or the network: Finding.Cause),
// database.go judges their backend quota and fragmentation.
// Rules read the Result only; package judge calls Run.
package diagnose
