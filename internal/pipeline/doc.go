// Package pipeline runs the commands' data flow: measure, fold into stats,
// check and diagnose, and assemble the Result. It prints nothing.
//
// Design. One file per command (Bench, Check, Doctor, Disk, Logs, Metrics,
// Scale, ...); a run goes this way:
//
//	measure  the measuring packages (diskprobe or fio, loadrun, memberwatch,
//	         capacity, etcdlog, promexport, scale, kubescale) return what
//	         they measured, as the sections of a Result where a section
//	         is theirs alone, and say their options as its params;
//	         pipeline puts them in a result.New(kind)
//	judge    judge.Judge(res, criteria): checks, findings, verdict and
//	         summary, from the Result alone
//	finish   res.Finish(); a run cut short returns what it measured, with
//	         Error set, beside its error
//	render   not here: package cli writes the Result with -o (render,
//	         report)
//
// What belongs here: the order of the steps, a command's options, assembling
// what the measuring packages return into a Result, and removing what
// the run created. What does not: limits (check.Table),
// conclusions (diagnose), verdicts (judge), wording and layout (render),
// flags (cli). Whatever the verdict depends on goes into the Result, so
// that a Result read back from JSON is judged the same again.
package pipeline
