// Package capacity runs the capacity sweep and the soak: how many puts/s a
// storage (or a cluster) carries within etcd's limits, and whether a rate
// holds for minutes.
//
// Design. The sweep steps the offered put rate up a ladder (check perf's
// profiles, with finer steps where most disks' knees lie), one step
// between the highest rate that held and the lowest that broke, then
// holds its answer (a confirm step); the soak holds one rate and samples
// it every interval. Each load goes through a function the caller passes
// in (Options.Run, SoakOptions.Run: pipeline's check load), which returns
// a step judged as a check is judged (its figures and the limits it broke);
// where to step next is read from those. What the package returns is
// measurements: the steps and the series, with the settings they ran by.
// What they mean (the capacity's answer and cause, the soak's sustained
// rate and drop) is judge's (judge.Capacity, judge.Soak), from the Result
// alone, so that a Result read back from JSON is judged the same again.
// It prints nothing: progress goes through the callbacks in the options.
package capacity
