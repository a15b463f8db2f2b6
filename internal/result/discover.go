package result

import "strings"

// Discover is the outcome of `etcdperf discover`: the etcd members whose
// configuration was found on a node, read-only, and what was looked at.
type Discover struct {
	// Root is the directory the node's files were read under ("/" on the
	// node itself); every path below is as on the node, without Root.
	Root string `json:"root"`
	// Looked lists the files and patterns looked at, in order.
	Looked []string `json:"looked"`
	// Found lists each etcd configuration found, in the order of Looked.
	Found []FoundEtcd `json:"found,omitempty"`
	// Problems lists the files that exist but could not be read or parsed.
	Problems []DiscoverProblem `json:"problems,omitempty"`
	// NoSettings lists the files that exist and were read but set nothing
	// for etcd (only comments, as a package installs them): no etcd was
	// found in them.
	NoSettings []string `json:"no_settings,omitempty"`
}

// FoundEtcd is one etcd member's configuration found on a node.
type FoundEtcd struct {
	// Source is how it is run: kubeadm, k3s, rke2, openshift or systemd.
	Source string `json:"source"`
	// File is the file the configuration came from.
	File    string `json:"file"`
	Name    string `json:"name,omitempty"`
	DataDir string `json:"data_dir,omitempty"`
	// Endpoints are the client URLs to reach it from the node: its listen
	// URLs with 0.0.0.0 and :: as 127.0.0.1, a loopback one first.
	Endpoints           []string `json:"endpoints,omitempty"`
	ListenClientURLs    []string `json:"listen_client_urls,omitempty"`
	AdvertiseClientURLs []string `json:"advertise_client_urls,omitempty"`
	// MetricsURL is its /metrics on --listen-metrics-urls; empty when it
	// serves them only on the client URLs.
	MetricsURL string `json:"metrics_url,omitempty"`
	// CACert, Cert and Key are what a client on the node uses to connect.
	CACert string `json:"cacert,omitempty"`
	Cert   string `json:"cert,omitempty"`
	Key    string `json:"key,omitempty"`
	// Missing lists those of CACert, Cert and Key that do not exist.
	Missing []string `json:"missing,omitempty"`
	// Log is where its log is: the newest log file, or a command.
	Log string `json:"log,omitempty"`
	// Unit is the systemd unit whose journal holds its log, when it logs
	// to the journal (a systemd etcd: etcd; k3s: k3s).
	Unit string `json:"unit,omitempty"`
	// Flags are the values of etcd's tunable flags (heartbeat-interval,
	// election-timeout, quota-backend-bytes, auto-compaction-mode,
	// auto-compaction-retention, snapshot-count) as the configuration sets
	// them; a flag it does not set is etcd's default.
	Flags map[string]string `json:"flags,omitempty"`
	// Notes say what was assumed (a default) or could not be resolved.
	Notes []string `json:"notes,omitempty"`
	// NothingListens lists its client endpoints on this host where a
	// connection was refused, set when every one tried refused: no etcd
	// runs there. Endpoints of other hosts are never tried.
	NothingListens []string `json:"nothing_listens,omitempty"`
}

// NotRunning says, when nothing listens at its client endpoints, where
// it was found and where nothing listens; "" otherwise.
func (f FoundEtcd) NotRunning() string {
	if len(f.NothingListens) == 0 {
		return ""
	}
	return "found in " + f.File + ", but nothing listens at " + strings.Join(f.NothingListens, ", ")
}

// DiscoverProblem is a file that exists but could not be used.
type DiscoverProblem struct {
	File  string `json:"file"`
	Error string `json:"error"`
}
