package result

// The kinds of Result, one per command (the "kind" field).
const (
	KindDisk       = "disk"
	KindBench      = "bench"
	KindCheck      = "check"
	KindDatascale  = "datascale"
	KindDoctor     = "doctor"
	KindLogs       = "logs"
	KindMetrics    = "metrics"
	KindPromExport = "prom"
	KindPromCheck  = "prom-check"
	KindScale      = "scale"
	KindDiscover   = "discover"
	KindDB         = "db"
	KindCompare    = "compare"
)
