package result

// Tuning is etcd's flags for the cluster a command measured: each with the
// value in force where the command learned it, the value the measured
// figures call for, and the figure and rule behind it. Nothing is changed
// on the cluster: the operator applies what is suggested.
type Tuning struct {
	// Known are the flags' values in force as the command learned them
	// (stated with --current-flag, or read from the members); the judge
	// reads them.
	Known []FlagValue `json:"known,omitempty"`
	// Flags are the judge's suggestions, one per flag it has figures for.
	Flags []TunedFlag `json:"flags,omitempty"`
	// Notes say what the figures cannot settle, or why a flag is better
	// left alone (a slow disk behind late heartbeats).
	Notes []string `json:"notes,omitempty"`
	// Defrag is the plan for defragmenting the members (nil: their
	// databases' sizes are not known).
	Defrag *DefragPlan `json:"defrag,omitempty"`
	// Layout is where the member's flags are set on its node (doctor
	// --node), for the changes to be written as it takes them; nil
	// elsewhere.
	Layout *FlagLayout `json:"layout,omitempty"`
}

// FlagLayout is how a node runs etcd and the file that sets its flags.
type FlagLayout struct {
	// Member is the member's name.
	Member string `json:"member"`
	// Source is kubeadm, k3s, rke2, openshift or systemd (as discover
	// names them), File the file discover read the flags from.
	Source string `json:"source"`
	File   string `json:"file"`
}

// Changes are the flags whose suggestion differs from the value in
// force, or whose value in force is unknown.
func (t *Tuning) Changes() []TunedFlag {
	if t == nil {
		return nil
	}
	var out []TunedFlag
	for _, f := range t.Flags {
		if f.Action != TuneKeep {
			out = append(out, f)
		}
	}
	return out
}

// FlagValue is one etcd flag's value in force, in etcd's own unit
// (milliseconds for the timers, bytes for the quota), and where it was
// learned.
type FlagValue struct {
	// Name is the flag without its dashes ("heartbeat-interval").
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// Text is the value as the configuration gives it, where it is not a
	// plain number (--auto-compaction-mode=periodic, a retention of
	// "5m").
	Text string `json:"text,omitempty"`
	From string `json:"from"`
}

// Actions of a TunedFlag.
const (
	// TuneKeep: the value in force suits what was measured.
	TuneKeep = "keep"
	// TuneChange: set the flag to Suggested.
	TuneChange = "change"
	// TuneAtLeast: the value in force is unknown; it should be at least
	// Suggested.
	TuneAtLeast = "at least"
)

// TunedFlag is the judge's suggestion for one flag.
type TunedFlag struct {
	// Name is the flag without its dashes, Unit etcd's unit for it ("ms",
	// "bytes").
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Current is the value in force and CurrentFrom where it was learned;
	// 0 and "" when unknown.
	Current     float64 `json:"current,omitempty"`
	CurrentFrom string  `json:"current_from,omitempty"`
	// Suggested is the value the figures call for, Action what to do with
	// it (TuneKeep, TuneChange, TuneAtLeast).
	Suggested float64 `json:"suggested"`
	Action    string  `json:"action"`
	// CurrentArg and SuggestedArg are the values as etcd takes them where
	// they are not plain numbers ("periodic", "5m"); empty otherwise.
	CurrentArg   string `json:"current_arg,omitempty"`
	SuggestedArg string `json:"suggested_arg,omitempty"`
	// Why states the measured figure and the rule that gives Suggested,
	// Source the rule's public source.
	Why    string `json:"why"`
	Source string `json:"source"`
}

// Value returns the value in force of the flag name, and whether it is
// known.
func (t *Tuning) Value(name string) (FlagValue, bool) {
	if t == nil {
		return FlagValue{}, false
	}
	for _, f := range t.Known {
		if f.Name == name {
			return f, true
		}
	}
	return FlagValue{}, false
}

// DefragPlan is when and how to defragment the members, from their
// databases' sizes: the members in the order to take them, one at a time
// (followers first, the leader last after moving its leadership).
type DefragPlan struct {
	// Due says whether any member's file is worth a defragmentation, by
	// Rule.
	Due  bool   `json:"due"`
	Rule string `json:"rule"`
	// Members are those due, in order; none when nothing is due.
	Members []DefragMember `json:"members,omitempty"`
	// Took is the longest defragmentation a member made during the run
	// (seconds; 0: none seen), and TookOn that member.
	Took   float64 `json:"took,omitempty"`
	TookOn string  `json:"took_on,omitempty"`
}

// DefragMember is one member of a DefragPlan.
type DefragMember struct {
	Name   string `json:"name"`
	Leader bool   `json:"leader,omitempty"`
	// Size and InUse are its database file's size and the part of it in
	// use, in bytes.
	Size  float64 `json:"size"`
	InUse float64 `json:"in_use"`
	// Stall is its defragmentation's predicted stall (seconds; 0: not
	// known), and StallFrom what predicts it.
	Stall     float64 `json:"stall,omitempty"`
	StallFrom string  `json:"stall_from,omitempty"`
	// Commands defragment it (etcdctl), moving its leadership first.
	Commands []string `json:"commands"`
}
