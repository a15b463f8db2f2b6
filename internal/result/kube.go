package result

// Kube is the outcome of `etcdperf scale --kubeconfig`: a density run
// through Kubernetes' API server, judged by the latency its users see.
type Kube struct {
	// Server is the API server's URL; Version its git version.
	Server  string `json:"server"`
	Version string `json:"version,omitempty"`
	// Namespace is the run's own namespace (deleted at the end).
	Namespace string `json:"namespace"`
	// QPS and Burst are client-go's rate limit the run kept to: the calls
	// waited for it before their time was taken.
	QPS   float64 `json:"qps"`
	Burst int     `json:"burst"`
	// Clients is the number of concurrent writers.
	Clients int `json:"clients"`
	// Kinds are the resources the run grows and their targets.
	Kinds []KubeKind `json:"kinds"`
	// Steps holds one entry per completed step, in order.
	Steps []KubeStep `json:"steps"`
	// Planned is the number of steps asked for; Stopped says why the run
	// stopped before its last step.
	Planned int    `json:"planned_steps"`
	Stopped string `json:"stopped,omitempty"`
	// Seconds is the wall time of the steps.
	Seconds float64 `json:"seconds"`
	// ServerMetrics is true when the API server's /metrics could be read
	// (its histograms are then in the steps).
	ServerMetrics bool `json:"server_metrics"`
	// Notes say what the reader must know to trust the numbers.
	Notes []string `json:"notes,omitempty"`
}

// KubeKind is one resource of a density run through the API server.
type KubeKind struct {
	// Resource is the API's plural name, e.g. pods, leases.
	Resource string `json:"resource"`
	Target   int64  `json:"target"`
}

// KubeStep is what the API server's users saw during one step.
type KubeStep struct {
	Step int `json:"step"`
	// T is the end of the step, in seconds since the first began.
	T       float64 `json:"t"`
	Seconds float64 `json:"seconds"`
	// Objects is the number of objects the run had created at the end of
	// the step, all resources.
	Objects int64 `json:"objects"`
	// Calls has one entry per resource, verb and scope the step made.
	Calls []KubeCall `json:"calls"`
	// Etcd is the API server's own view of its etcd requests over the
	// step (etcd_request_duration_seconds), by operation and type.
	Etcd []KubeEtcdCall `json:"etcd,omitempty"`
	// WALFsync and BackendCommit are etcd's histograms over the step,
	// summed over the members (with --endpoints).
	WALFsync      *Latency `json:"wal_fsync,omitempty"`
	BackendCommit *Latency `json:"backend_commit,omitempty"`
	// WatchEvents counts the events the run's watches received.
	WatchEvents int64 `json:"watch_events"`
}

// KubeCall is the calls of one resource, verb and scope in one step.
type KubeCall struct {
	// Resource is e.g. pods, or pods/status for a subresource.
	Resource string `json:"resource"`
	// Verb is the API server's: POST, PUT, PATCH, DELETE, GET, LIST.
	Verb string `json:"verb"`
	// Scope is resource, namespace or cluster, as the SLO defines it.
	Scope string `json:"scope"`
	// Client is the latency etcdperf measured, from the request's start
	// (after client-go's rate limiter) to the end of its response.
	Client *Latency `json:"client,omitempty"`
	// Server is apiserver_request_duration_seconds over the step for the
	// same verb, resource and scope (every client's calls, not only
	// etcdperf's).
	Server *Latency `json:"server,omitempty"`
	// Errors counts the failed calls by message.
	Errors map[string]int64 `json:"errors,omitempty"`
}

// KubeEtcdCall is the API server's etcd requests of one operation on one
// type over a step.
type KubeEtcdCall struct {
	Operation string   `json:"operation"`
	Type      string   `json:"type"`
	Latency   *Latency `json:"latency"`
}
