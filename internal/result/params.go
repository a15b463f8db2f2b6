package result

import (
	"encoding/json"
	"fmt"
)

// Params are the options a run was made with (the "params" object). Each
// kind of Result has its own type, which the command fills and a Result
// read back from JSON holds again (see paramsFor), so that views read
// fields, never keys:
//
//	disk                          *DiskParams
//	bench                         *BenchParams
//	check, datascale, doctor runs *CheckParams
//	doctor                        *DoctorParams
//	scale                         *ScaleParams (*KubeScaleParams with a kube section)
//	metrics                       *MetricsParams
//	logs                          *LogsParams
//	prom, prom-check              *PromParams
//	discover                      *DiscoverParams
//	db                            *DBParams
//	a kind this version does not know RawParams
//
// A key appears in the JSON when the command set it; a *bool or *int field
// is one that is only there for some runs, false or 0 included.
type Params interface{ params() }

func (*DiskParams) params()      {}
func (*BenchParams) params()     {}
func (*CheckParams) params()     {}
func (*DoctorParams) params()    {}
func (*ScaleParams) params()     {}
func (*KubeScaleParams) params() {}
func (*MetricsParams) params()   {}
func (*LogsParams) params()      {}
func (*PromParams) params()      {}
func (*DiscoverParams) params()  {}
func (*DBParams) params()        {}
func (RawParams) params()        {}

// RawParams are the params of a Result of a kind this version of etcdperf
// does not know, as JSON decodes them.
type RawParams map[string]any

// ConnParams are a connection to a running cluster: its endpoints, its
// user (never the password) and whether TLS is on.
type ConnParams struct {
	Endpoints     []string `json:"endpoints,omitempty"`
	EndpointsFrom string   `json:"endpoints_from,omitempty"`
	User          string   `json:"user,omitempty"`
	TLS           bool     `json:"tls,omitempty"`
}

// EmbeddedParams are the members the run started itself.
type EmbeddedParams struct {
	DataDir  string `json:"data_dir"`
	Members  int    `json:"members"`
	KeepData bool   `json:"keep_data"`
}

// TargetParams are either a connection or embedded members.
type TargetParams struct {
	ConnParams
	*EmbeddedParams
}

// DiskParams are `etcdperf disk`'s. Durations are seconds, sizes bytes.
type DiskParams struct {
	Engine    string  `json:"engine"`
	Dir       string  `json:"dir"`
	BS        int     `json:"bs"`
	Size      int64   `json:"size"`
	Prealloc  bool    `json:"prealloc"`
	Sync      string  `json:"sync"`
	Direct    bool    `json:"direct"`
	RW        string  `json:"rw"`
	Jobs      int     `json:"jobs"`
	Runtime   float64 `json:"runtime,omitempty"`
	TimeBased bool    `json:"time_based,omitempty"`
}

// BenchParams are `etcdperf bench`'s, and the load of check, datascale
// and doctor. The workload's own options are set for that workload only.
type BenchParams struct {
	Workload string `json:"workload"`
	Conns    int    `json:"conns"`
	Clients  int    `json:"clients"`
	Prefix   string `json:"prefix"`
	// TargetLeader, KeepKeys and Compact are bench's options (check has none).
	TargetLeader   *bool   `json:"target_leader,omitempty"`
	KeepKeys       *bool   `json:"keep_keys,omitempty"`
	Compact        *bool   `json:"compact,omitempty"`
	EtcdClient     bool    `json:"etcd_client,omitempty"`
	Total          int64   `json:"total,omitempty"`
	Duration       float64 `json:"duration,omitempty"`
	Rate           float64 `json:"rate,omitempty"`
	CommandTimeout float64 `json:"command_timeout,omitempty"`
	TargetParams
	KeySize           int     `json:"key_size,omitempty"`
	ValSize           int     `json:"val_size,omitempty"`
	KeySpaceSize      *int64  `json:"key_space_size,omitempty"`
	SequentialKeys    *bool   `json:"sequential_keys,omitempty"`
	TxnOps            int     `json:"txn_ops,omitempty"`
	RWRatio           float64 `json:"rw_ratio,omitempty"`
	Limit             *int64  `json:"limit,omitempty"`
	Consistency       string  `json:"consistency,omitempty"`
	KeysOnly          *bool   `json:"keys_only,omitempty"`
	CountOnly         *bool   `json:"count_only,omitempty"`
	Key               string  `json:"key,omitempty"`
	RangeEnd          *string `json:"range_end,omitempty"`
	Streams           int     `json:"streams,omitempty"`
	WatchersPerStream int     `json:"watchers_per_stream,omitempty"`
	PrevKV            *bool   `json:"prevkv,omitempty"`
	LeaseTTL          int64   `json:"lease_ttl,omitempty"`
}

// ProfileParams are the load profile of check, datascale and doctor.
type ProfileParams struct {
	Load        string `json:"load"`
	AutoCompact bool   `json:"auto_compact"`
	AutoDefrag  bool   `json:"auto_defrag"`
	// Soak, SoakRate and SoakInterval are --soak (seconds), --soak-rate
	// (puts/s; 0: the sweep's answer) and --soak-interval (seconds).
	Soak         float64 `json:"soak,omitempty"`
	SoakRate     float64 `json:"soak_rate,omitempty"`
	SoakInterval float64 `json:"soak_interval,omitempty"`
}

// NodeLogParams say where doctor --node read its member's log, and what
// went wrong reading it.
type NodeLogParams struct {
	LogFile    string `json:"log_file,omitempty"`
	LogJournal string `json:"log_journal,omitempty"`
	LogError   string `json:"log_error,omitempty"`
}

// LogSource is the file or the journal the log was read from.
func (p NodeLogParams) LogSource() string {
	if p.LogFile != "" {
		return p.LogFile
	}
	return p.LogJournal
}

// CheckParams are check's and datascale's, and those of each of doctor's
// targets (which may have put no load, or only read a log).
type CheckParams struct {
	*BenchParams
	*ProfileParams
	NodeLogParams
}

// DoctorParams are `etcdperf doctor`'s (its targets' are CheckParams).
type DoctorParams struct {
	Load               string   `json:"load,omitempty"`
	Rate               float64  `json:"rate,omitempty"`
	Clients            int      `json:"clients,omitempty"`
	Duration           float64  `json:"duration"`
	Noise              bool     `json:"noise"`
	DataDirs           []string `json:"data_dirs,omitempty"`
	DiskRuntime        *float64 `json:"disk_runtime,omitempty"`
	DiskSize           int64    `json:"disk_size,omitempty"`
	SimulateFsyncDelay float64  `json:"simulate_fsync_delay,omitempty"`
	CapacityStep       float64  `json:"capacity_step,omitempty"`
	CapacityConfirm    float64  `json:"capacity_confirm,omitempty"`
	// Soak, SoakRate and SoakInterval are --soak (seconds), --soak-rate
	// (puts/s; 0: the sweep's answer) and --soak-interval (seconds).
	Soak         float64 `json:"soak,omitempty"`
	SoakRate     float64 `json:"soak_rate,omitempty"`
	SoakInterval float64 `json:"soak_interval,omitempty"`
	Demand       float64 `json:"demand,omitempty"`
	DemandFrom   *string `json:"demand_from,omitempty"`
	// Node is where doctor --node found the member (its installer's file).
	Node        string `json:"node,omitempty"`
	DataDir     string `json:"data_dir,omitempty"`
	ObserveOnly *bool  `json:"observe_only,omitempty"`
	ConnParams
}

// ScaleParams are `etcdperf scale`'s against etcd.
type ScaleParams struct {
	Objects string `json:"objects"`
	// ValueSize is the distribution of each kind's values.
	ValueSize    map[string]string `json:"value_size"`
	Steps        int               `json:"steps"`
	Clients      int               `json:"clients"`
	Conns        int               `json:"conns"`
	Prefix       string            `json:"prefix"`
	UpdateRate   float64           `json:"update_rate"`
	PageLimit    int64             `json:"page_limit"`
	Lists        int               `json:"lists"`
	ListInterval float64           `json:"list_interval"`
	EventTTL     float64           `json:"event_ttl"`
	Namespaces   int               `json:"namespaces"`
	RandomState  uint64            `json:"random_state,omitempty"`
	Rate         float64           `json:"rate,omitempty"`
	TargetParams
}

// KubeScaleParams are `etcdperf scale`'s through a Kubernetes API server.
type KubeScaleParams struct {
	Objects      string  `json:"objects"`
	Steps        int     `json:"steps"`
	Clients      int     `json:"clients"`
	QPS          float64 `json:"qps"`
	Burst        int     `json:"burst"`
	Namespace    string  `json:"namespace"`
	UpdateRate   float64 `json:"update_rate"`
	LeaseRenew   float64 `json:"lease_renew"`
	PageLimit    int64   `json:"page_limit"`
	Lists        int     `json:"lists"`
	Gets         int     `json:"gets"`
	ListInterval float64 `json:"list_interval"`
	Kubeconfig   string  `json:"kubeconfig,omitempty"`
	// Server is the API server's address (never its token).
	Server string `json:"server,omitempty"`
	ConnParams
}

// MetricsParams are `etcdperf metrics`'.
type MetricsParams struct {
	Interval float64 `json:"interval"`
	Duration float64 `json:"duration"`
	ConnParams
}

// LogsParams are `etcdperf logs`'.
type LogsParams struct {
	Paths     []string `json:"paths"`
	Bucket    float64  `json:"bucket"`
	Top       int      `json:"top"`
	MaxEvents int      `json:"max_events,omitempty"`
	Timezone  string   `json:"timezone,omitempty"`
}

// PromParams are `etcdperf prom export`'s and `prom check`'s.
type PromParams struct {
	URL   string  `json:"url"`
	Start string  `json:"start"`
	End   string  `json:"end"`
	Step  float64 `json:"step"`
	// Auth is basic or bearer (never the password or the token).
	Auth     string   `json:"auth,omitempty"`
	User     string   `json:"user,omitempty"`
	Selector string   `json:"selector,omitempty"`
	Window   float64  `json:"window,omitempty"`
	Matrix   []string `json:"matrix,omitempty"`
	Preset   string   `json:"preset,omitempty"`
}

// DiscoverParams are `etcdperf discover`'s.
type DiscoverParams struct {
	Root string `json:"root"`
}

// DBParams are `etcdperf db`'s.
type DBParams struct {
	Path string `json:"path"`
	// Paths are the members' databases compared (db FILE FILE...).
	Paths []string `json:"paths,omitempty"`
	// Quota is --quota-backend-bytes, 0 when not given (etcd's default).
	Quota        float64  `json:"quota,omitempty"`
	KubePrefixes []string `json:"kube_prefixes"`
	Top          int      `json:"top"`
}

// paramsFor is the type of the params of a Result of kind, under a Result
// of kind parent ("" at the top): a doctor's targets hold their load's.
func paramsFor(kind, parent string, kube bool) Params {
	switch kind {
	case KindDisk:
		return &DiskParams{}
	case KindBench:
		return &BenchParams{}
	case KindCheck, KindDatascale:
		return &CheckParams{}
	case KindDoctor:
		if parent == KindDoctor {
			return &CheckParams{}
		}
		return &DoctorParams{}
	case KindScale:
		if kube {
			return &KubeScaleParams{}
		}
		return &ScaleParams{}
	case KindMetrics:
		return &MetricsParams{}
	case KindLogs:
		return &LogsParams{}
	case KindPromExport, KindPromCheck:
		return &PromParams{}
	case KindDiscover:
		return &DiscoverParams{}
	case KindDB:
		return &DBParams{}
	}
	return nil
}

// UnmarshalJSON reads a Result with its params in the type of its kind.
func (r *Result) UnmarshalJSON(b []byte) error {
	return r.decode(b, "")
}

func (r *Result) decode(b []byte, parent string) error {
	type plain Result
	var doc struct {
		*plain
		Params json.RawMessage   `json:"params"`
		Runs   []json.RawMessage `json:"runs"`
	}
	doc.plain = (*plain)(r)
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	r.Params = nil
	if len(doc.Params) > 0 && string(doc.Params) != "null" {
		// Params of a kind this version does not know, or not of its
		// kind's shape (written by hand), are kept as they are.
		if p := paramsFor(r.Kind, parent, r.Kube != nil); p != nil && json.Unmarshal(doc.Params, p) == nil {
			r.Params = p
		} else {
			var raw RawParams
			if err := json.Unmarshal(doc.Params, &raw); err != nil {
				return fmt.Errorf("params: %w", err)
			}
			r.Params = raw
		}
	}
	r.Runs = nil
	for _, raw := range doc.Runs {
		var run Result
		if err := run.decode(raw, r.Kind); err != nil {
			return err
		}
		r.Runs = append(r.Runs, run)
	}
	return nil
}

// LoadParams are the params of the load of bench, check, datascale and
// doctor's targets; nil for a Result that put none.
func (r *Result) LoadParams() *BenchParams {
	switch p := r.Params.(type) {
	case *BenchParams:
		return p
	case *CheckParams:
		return p.BenchParams
	}
	return nil
}
