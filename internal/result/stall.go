package result

// Stall says that a load ended early because etcd stopped answering: no
// request succeeded for Timeout seconds (the command timeout) while Failed
// requests failed.
type Stall struct {
	Timeout float64 `json:"timeout"`
	Failed  int64   `json:"failed"`
}
