package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// tuningText writes the flags the figures call for: per flag the value in
// force (and where it was learned), the value suggested, and the figure
// and rule behind it; then the notes.
func tuningText(w io.Writer, t *result.Tuning) {
	if t == nil || len(t.Flags) == 0 && len(t.Notes) == 0 && t.Defrag == nil {
		return
	}
	fmt.Fprintf(w, "\netcd's flags for this cluster, from what was measured (nothing was changed; set them alike on every member):\n")
	for _, f := range t.Flags {
		cur, todo := TunedFlagWords(f)
		fmt.Fprintf(w, "  --%s: in force %s; %s\n", f.Name, cur, todo)
		fmt.Fprintf(w, "      why: %s (%s)\n", f.Why, f.Source)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if t.Defrag != nil {
		fmt.Fprintf(w, "  defragmentation: %s\n", DefragWords(t.Defrag))
		for i, m := range t.Defrag.Members {
			fmt.Fprintf(w, "    %d. %s: %s\n", i+1, DefragMemberWords(m), strings.Join(m.Commands, " && "))
		}
	}
	tuningApplyText(w, t)
}

// DefragWords says whether a defragmentation is due, by what rule, and
// how to go about it.
func DefragWords(p *result.DefragPlan) string {
	if !p.Due {
		return "not due: no member's database file is " + p.Rule
	}
	s := "due (a member's database file " + p.Rule + "): one member at a time after a compaction, followers first, the leader last after moving its leadership " +
		"(each blocks its member while it runs)"
	if p.Took > 0 {
		s += fmt.Sprintf("; a defragmentation during the run took up to %s (%s)", units.Seconds(p.Took), p.TookOn)
	} else {
		s += "; etcdperf doctor --data-dir on a member's storage predicts how long it stalls"
	}
	return s
}

// DefragMemberWords is one member of a plan: its name, role and file.
func DefragMemberWords(m result.DefragMember) string {
	role := "follower"
	if m.Leader {
		role = "leader"
	}
	stall := "its stall not known"
	if m.Stall > 0 {
		stall = "a stall of about " + units.Seconds(m.Stall) + " (" + m.StallFrom + ")"
	}
	return fmt.Sprintf("%s (%s, file %s, %s in use, %s)", m.Name, role, units.Bytes(m.Size), units.Bytes(m.InUse), stall)
}

// TunedFlagWords says a flag's value in force (and where it was learned,
// or how to state it) and what to do with it.
func TunedFlagWords(f result.TunedFlag) (inForce, todo string) {
	inForce = "unknown (state it with --current-flag " + f.Name + "=VALUE)"
	if f.CurrentFrom != "" {
		v := flagValue(f.Current, f.Unit)
		if f.CurrentArg != "" {
			v = f.CurrentArg
		}
		inForce = v + " (" + f.CurrentFrom + ")"
	}
	switch f.Action {
	case result.TuneKeep:
		todo = "keep it"
	case result.TuneChange:
		todo = "set --" + f.Name + "=" + FlagArg(f)
	case result.TuneAtLeast:
		todo = "make sure it is at least " + flagValue(f.Suggested, f.Unit) + " (--" + f.Name + "=" + FlagArg(f) + ")"
	}
	return inForce, todo
}

// flagValue is a flag's value for a reader: "250ms", "2.5s", "4 GiB".
func flagValue(v float64, unit string) string {
	switch unit {
	case "ms":
		return units.Seconds(v / 1000)
	case "bytes":
		return units.Bytes(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// FlagArg is a suggested value as etcd takes it: a word or a duration
// as it is ("periodic", "2m30s"), milliseconds and bytes as plain
// integers.
func FlagArg(f result.TunedFlag) string {
	if f.SuggestedArg != "" {
		return f.SuggestedArg
	}
	return fmt.Sprintf("%.0f", f.Suggested)
}
