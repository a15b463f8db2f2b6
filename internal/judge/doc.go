// Package judge turns what a run measured into its verdict: the checks
// against etcd's limits, the findings (package diagnose), the verdict and
// the summary, from the Result's own data only. Each kind of Result has
// one judgement, registered here once; a Result read back from JSON can be
// judged again (Again) and gets the same verdict and findings.
//
// Design. Judge is the one place where measurements meet limits. A kind's
// judgement (judges, one file per command) applies the criteria it was
// given (check.Table with --limit's changes) to the Result's sections as
// checks (check.Apply), then conclude runs diagnose's rules for the
// findings and combines both into the verdict; the summary sentence comes
// last. Judge records in Result.Limits the levels that differ from
// check.Table's and Criteria reads them back, so that judging again uses
// the limits of the first judgement; TestGoldenResultsJudgeTheSameAgain
// holds every render fixture to it. A capacity sweep and a soak are judged
// with their target (Capacity, Soak): the sweep's answer and its cause
// from its steps, by the write-cap rules in capacitycause.go (an ordered
// table, capacityRules, over diagnose.Levels), the soak's steady state
// from its series. judge reads the Result only: it neither measures nor
// talks to the network.
package judge
