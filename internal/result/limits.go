package result

// Limit is a level a run was judged by that differs from etcdperf's
// defaults (set with --limit): a check's limit, or a level of the findings
// that no check holds. A Result judged again uses it.
type Limit struct {
	Name  string   `json:"name"`
	Limit float64  `json:"limit"`
	Warn  *float64 `json:"warn,omitempty"`
	// Source says where the level comes from ("set with --limit ...").
	Source string `json:"source,omitempty"`
}
