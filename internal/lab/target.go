package lab

import (
	"context"
	"errors"
	"fmt"
	"github.com/etcdperf/etcdperf/internal/cluster"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/cgroup"
	"github.com/etcdperf/etcdperf/internal/sysinfo"
)

// Kinds of targets.
const (
	External = "external"
	Embedded = "embedded"
)

// TargetOptions choose what etcd a command runs against: the cluster at
// Conn.Endpoints, or, without endpoints, Members embedded etcd members
// started under DataDir.
type TargetOptions struct {
	// Conn reaches an external cluster; its timeouts also apply to
	// embedded members.
	Conn cluster.ConnOptions
	// Members is the number of embedded members (default 1). One runs in
	// this process; several run as child processes (ServerCommand), so that
	// each has its own metrics and fails on its own.
	Members int
	// DataDir is the directory (the storage under test) that receives the
	// run folder etcdperf-<RunID> with the members' data and logs.
	DataDir string
	// RunID names the run folder; it must be unique.
	RunID string
	// KeepData leaves the run folder in place on Close.
	KeepData bool
	// ServerCommand runs one member (`etcdperf server`); the member's flags
	// are appended. Default: this executable with "server".
	ServerCommand []string
	// Separate runs even a single member as a child process, so that this
	// process's CPU and memory are the client's alone.
	Separate bool
	// StartTimeout bounds starting the members (default DefaultStartTimeout).
	StartTimeout time.Duration
	// Faults holds what each member (by index) suffers on purpose; a member
	// with a fault always runs as a child process.
	Faults []Fault
	// HeartbeatMs and ElectionMs are every embedded member's
	// --heartbeat-interval and --election-timeout (0: etcd's defaults).
	HeartbeatMs, ElectionMs uint
}

// faulty reports whether any member has a fault.
func (o TargetOptions) faulty() bool {
	for _, f := range o.Faults {
		if f.Any() {
			return true
		}
	}
	return false
}

// Target is an etcd cluster a command uses: external, or embedded and owned
// by the Target.
type Target struct {
	kind    string
	client  *cluster.Client
	members []cluster.Member
	runDir  string
	keep    bool
	inproc  *EmbeddedMember
	procs   []*memberProc
	logFile *os.File
}

// Open connects to the external cluster, or starts the embedded one and
// connects to it. Starting is bounded by the start timeout; on any error,
// and when ctx ends, everything started is stopped and removed.
func Open(ctx context.Context, o TargetOptions) (*Target, error) {
	cluster.QuietGRPC()
	if len(o.Conn.Endpoints) > 0 {
		c, err := cluster.Connect(ctx, o.Conn)
		if err != nil {
			return nil, err
		}
		t := &Target{kind: External, client: c}
		if t.members, err = c.Members(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return t, nil
	}
	t, err := startEmbedded(ctx, o)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Kind is External or Embedded.
func (t *Target) Kind() string { return t.kind }

// Client is the connection to the cluster.
func (t *Target) Client() *cluster.Client { return t.client }

// Members are the cluster's members as of Open (or the last Refresh).
func (t *Target) Members() []cluster.Member { return append([]cluster.Member(nil), t.members...) }

// RunDir is the embedded members' folder ("" for an external cluster).
func (t *Target) RunDir() string { return t.runDir }

// Leader returns the leader as of Open (or the last Refresh).
func (t *Target) Leader() (cluster.Member, bool) {
	for _, m := range t.members {
		if m.Leader {
			return m, true
		}
	}
	return cluster.Member{}, false
}

// Refresh asks the cluster for its members and leader again.
func (t *Target) Refresh(ctx context.Context) error {
	ms, err := t.client.Members(ctx)
	if err != nil {
		return err
	}
	t.members = t.mergeKnown(ms)
	return nil
}

// Close closes the connection and, for an embedded cluster, stops the
// members and removes the run folder unless it is kept.
func (t *Target) Close() error {
	if t.client != nil && t.client.Client != nil {
		t.client.Close()
	}
	left := t.stopMembers()
	if t.runDir == "" || t.keep {
		return left
	}
	if err := os.RemoveAll(t.runDir); err != nil {
		return errors.Join(left, fmt.Errorf("remove the embedded etcd's folder %s: %w", t.runDir, err))
	}
	return left
}

// stopMembers stops the members; its error is what it could not remove of
// what a member killed outright left behind.
func (t *Target) stopMembers() error {
	var left []error
	if t.inproc != nil {
		t.inproc.Close()
		t.inproc = nil
	}
	limited := false
	for _, p := range t.procs {
		if err := p.stop(10 * time.Second); err != nil {
			left = append(left, err)
		}
		limited = limited || p.cfg.cgroups()
	}
	t.procs = nil
	if limited {
		// A member killed outright could not leave its cgroups.
		cgroup.Host.RemoveStale()
	}
	if t.logFile != nil {
		cluster.GRPCLogTo(nil)
		t.logFile.Close()
		t.logFile = nil
	}
	return errors.Join(left...)
}

// VolumeDevice is the device of the first member that runs on a capped
// volume of its own (--fault N:volume-iops), e.g. "loop3": the device
// under that member's data, whose figures show the volume's cap, rather
// than the disk under the volume's file. It is "" when no member does.
func (t *Target) VolumeDevice() string {
	for _, p := range t.procs {
		if !p.cfg.VolumeLimit().Any() {
			continue
		}
		if m, err := sysinfo.FindMount(p.cfg.DataDir); err == nil && m.MountPoint == p.cfg.DataDir && m.Device != "" {
			return m.Device
		}
	}
	return ""
}

// MemberExited reports whether the embedded member process called name has
// ended (always false for in-process and external members).
func (t *Target) MemberExited(name string) bool {
	for _, p := range t.procs {
		if p.cfg.Name == name {
			return p.exited()
		}
	}
	return false
}

func startEmbedded(ctx context.Context, o TargetOptions) (*Target, error) {
	n := o.Members
	if n <= 0 {
		n = 1
	}
	if o.RunID == "" {
		return nil, errors.New("an embedded cluster needs a run ID")
	}
	dataDir := o.DataDir
	if dataDir == "" {
		dataDir = "."
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--data-dir %s does not exist: create it on the storage to test (mkdir -p %s) (%w)", abs, abs, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", abs, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--data-dir %s is not a directory", abs)
	}
	if err := checkDataDirSpace(abs, n); err != nil {
		return nil, err
	}
	for i, f := range o.Faults {
		if err := f.ValidateDir(abs); err != nil {
			return nil, fmt.Errorf("--fault on member %d: %w", i+1, err)
		}
	}
	runDir := filepath.Join(abs, "etcdperf-"+o.RunID)
	if err := os.Mkdir(runDir, 0o700); err != nil {
		return nil, explainDataDirErr(abs, err)
	}
	t := &Target{kind: Embedded, runDir: runDir, keep: o.KeepData}
	fail := func(err error) (*Target, error) {
		t.keep = false
		t.Close()
		return nil, err
	}
	timeout := o.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	command := o.ServerCommand
	if len(o.Faults) > n {
		return fail(fmt.Errorf("%d faults for %d members", len(o.Faults), n))
	}
	inProcess := n == 1 && !o.Separate && !o.faulty()
	if !inProcess && len(command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fail(fmt.Errorf("find etcdperf's executable to start the members: %w", err))
		}
		command = []string{exe, "server"}
	}
	// A port taken between choosing it and binding it makes the start fail:
	// try again with new ports.
	const attempts = 3
	var cfgs []MemberConfig
	for attempt := 1; ; attempt++ {
		cfgs, err = memberConfigs(runDir, n, o, timeout)
		if err != nil {
			return fail(err)
		}
		if inProcess {
			err = t.startInProcess(ctx, cfgs[0])
		} else {
			t.procs, err = startProcs(ctx, command, cfgs, timeout)
		}
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		if attempt == attempts || !strings.Contains(err.Error(), "address already in use") {
			return fail(err)
		}
		if err := t.stopMembers(); err != nil {
			return fail(err)
		}
		for _, c := range cfgs {
			os.RemoveAll(c.DataDir)
		}
	}
	conn := o.Conn
	for _, c := range cfgs {
		conn.Endpoints = append(conn.Endpoints, c.ClientURL)
	}
	c, err := cluster.Connect(ctx, conn)
	if err != nil {
		return fail(err)
	}
	t.client = c
	for i, c := range cfgs {
		m := cluster.Member{Name: c.Name, ClientURL: c.ClientURL, MetricsURL: cluster.MetricsURL(c.ClientURL), PeerURL: c.PeerURL, DataDir: c.DataDir, LogFile: c.LogFile,
			Fault: c.Fault.String()}
		if t.procs != nil {
			m.PID = t.procs[i].cmd.Process.Pid
		} else {
			m.PID = os.Getpid()
		}
		t.members = append(t.members, m)
	}
	if err := t.Refresh(ctx); err != nil {
		return fail(err)
	}
	return t, nil
}

func (t *Target) startInProcess(ctx context.Context, cfg MemberConfig) error {
	f, err := os.OpenFile(cfg.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("embedded etcd log: %w", err)
	}
	t.logFile = f
	cluster.GRPCLogTo(f)
	m, err := StartMember(ctx, cfg)
	if err != nil {
		return err
	}
	t.inproc = m
	return nil
}

func memberConfigs(runDir string, n int, o TargetOptions, timeout time.Duration) ([]MemberConfig, error) {
	ports, err := FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	cfgs := make([]MemberConfig, n)
	var initial []string
	for i := range cfgs {
		name := fmt.Sprintf("etcdperf-%d", i+1)
		cfgs[i] = MemberConfig{
			Name:         name,
			DataDir:      filepath.Join(runDir, name),
			ClientURL:    fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]),
			PeerURL:      fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			ClusterToken: "etcdperf-" + o.RunID,
			LogFile:      filepath.Join(runDir, name+".log"),
			StartTimeout: timeout,
			HeartbeatMs:  o.HeartbeatMs,
			ElectionMs:   o.ElectionMs,
		}
		if i < len(o.Faults) {
			cfgs[i].Fault = o.Faults[i]
		}
		initial = append(initial, name+"="+cfgs[i].PeerURL)
	}
	for i := range cfgs {
		cfgs[i].InitialCluster = strings.Join(initial, ",")
	}
	return cfgs, nil
}

// mergeKnown completes the cluster's member list with what etcdperf knows
// of the members it started (data dir, log file, process).
func (t *Target) mergeKnown(ms []cluster.Member) []cluster.Member {
	for i := range ms {
		for _, k := range t.members {
			if k.Name == ms[i].Name {
				ms[i].DataDir, ms[i].LogFile, ms[i].PID, ms[i].Fault = k.DataDir, k.LogFile, k.PID, k.Fault
			}
		}
	}
	return ms
}
