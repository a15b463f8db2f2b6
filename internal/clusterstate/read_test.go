package clusterstate_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/clusterstate"
	"github.com/etcdperf/etcdperf/internal/dbfile"
	"github.com/etcdperf/etcdperf/internal/diagnose"
	"github.com/etcdperf/etcdperf/internal/judge"
	"github.com/etcdperf/etcdperf/internal/lab"
	"github.com/etcdperf/etcdperf/internal/limits"
	"github.com/etcdperf/etcdperf/internal/netfault"
	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/slowfs"
	"github.com/etcdperf/etcdperf/internal/testutil"
)

// etcd34 is Debian's etcd-server (3.4), the second etcd version the rules
// are proven on.
const etcd34 = "/usr/bin/etcd"

// member is one member of a test cluster, started and stopped by the test.
type member struct {
	name, dir, client, peer string
	quota                   int64
	fault                   memberFault
	// slow is its data dir's slow view, when fault.slowFsync is set.
	slow  *slowfs.Mount
	proc  *exec.Cmd
	proxy *netfault.Proxy
}

// testCluster is a cluster of members of one etcd version, each a
// process: etcd 3.4's binary, or this test binary serving an embedded
// member (etcdperf server).
type testCluster struct {
	t *testing.T
	// v34 runs etcd 3.4's binary, else embedded members.
	v34     bool
	token   string
	members []*member
}

// memberEnv makes the test binary act as `etcdperf server`.
const memberEnv = "ETCDPERF_CLUSTERSTATE_TEST_AS_MEMBER"

func TestMain(m *testing.M) {
	if os.Getenv(memberEnv) == "1" {
		if err := lab.ServeArgs(os.Args[1:], io.Discard); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func (c *testCluster) initial() string {
	var parts []string
	for _, m := range c.members {
		parts = append(parts, m.name+"="+m.peer)
	}
	return strings.Join(parts, ",")
}

// memberFault is what is wrong with a member of a test cluster.
type memberFault struct {
	// delay is added to every round trip to its peer port.
	delay netfault.Delay
	// slowFsync is added to every fsync and fdatasync of its data dir (a
	// slow view of it, served by this test process) once the cluster is
	// up (member.slow.SetFsyncDelay: a member started on it would take
	// seconds to join).
	slowFsync time.Duration
}

// newCluster starts n members (etcd 3.4's binary, or embedded) with
// quota bytes of backend quota each, all at once (each waits for a
// quorum); faults[i], when given, is member i's fault.
func newCluster(t *testing.T, v34 bool, token string, n int, quota int64, faults ...memberFault) *testCluster {
	t.Helper()
	base := t.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "etcdperf-clusterstate-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			base = dir
		}
	}
	c := &testCluster{t: t, v34: v34, token: token}
	for i := 1; i <= n; i++ {
		c.members = append(c.members, &member{name: fmt.Sprintf("%s-%d", token, i), dir: filepath.Join(base, fmt.Sprintf("m%d", i)),
			client: fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t)), peer: fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t)), quota: quota})
		if i <= len(faults) {
			m := c.members[i-1]
			m.fault = faults[i-1]
			if m.fault.slowFsync > 0 {
				m.slow = slowView(t, m.dir)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range c.members {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.start(i) }()
	}
	wg.Wait()
	t.Cleanup(func() {
		for i, m := range c.members {
			c.stop(i)
			if m.proxy != nil {
				m.proxy.Close()
			}

		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return c
}

// slowView mounts at dir a view of a directory beside it whose fsyncs and
// fdatasyncs can be slowed, unmounted when the test ends (after its
// members stop: cleanups run last first).
func slowView(t *testing.T, dir string) *slowfs.Mount {
	t.Helper()
	real := dir + ".real"
	for _, d := range []string{real, dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	mnt, err := slowfs.Start(real, dir, slowfs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := mnt.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return mnt
}

// start starts member i (again: its data dir is kept) and waits until it
// sees a leader.
func (c *testCluster) start(i int) error {
	m := c.members[i]
	log, err := os.OpenFile(m.dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	var cmd *exec.Cmd
	if !c.v34 {
		cfg := lab.MemberConfig{Name: m.name, DataDir: m.dir, ClientURL: m.client, PeerURL: m.peer, InitialCluster: c.initial(), ClusterToken: c.token,
			QuotaBackendBytes: m.quota, ExitWithParent: true, StartTimeout: 30 * time.Second, Fault: lab.Fault{PeerDelay: m.fault.delay}}
		cmd = exec.Command(os.Args[0], cfg.Args()...)
		cmd.Env = append(os.Environ(), memberEnv+"=1")
	} else {
		listen := m.peer
		if m.fault.delay.Latency > 0 && m.proxy == nil {
			inner := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(c.t))
			if m.proxy, err = netfault.Listen(strings.TrimPrefix(m.peer, "http://"), inner, m.fault.delay); err != nil {
				return err
			}
			listen = "http://" + inner
		}
		cmd = exec.Command(etcd34, "--name", m.name, "--data-dir", m.dir, "--listen-client-urls", m.client, "--advertise-client-urls", m.client,
			"--listen-peer-urls", listen, "--initial-advertise-peer-urls", m.peer, "--initial-cluster", c.initial(), "--initial-cluster-token", c.token,
			"--quota-backend-bytes", fmt.Sprint(m.quota))
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	m.proc = cmd
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client}, DialTimeout: 2 * time.Second})
	if err != nil {
		return err
	}
	defer cli.Close()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st, err := cli.Status(ctx, m.client)
		cancel()
		if err == nil && st.Leader != 0 {
			return nil
		}
	}
	return fmt.Errorf("etcd %s did not get a leader within 30s (log %s)", m.name, m.dir+".log")
}

// stop stops member i (its data dir stays): SIGTERM, then SIGKILL after
// 10s.
func (c *testCluster) stop(i int) {
	m := c.members[i]
	if m.proc == nil {
		return
	}
	_ = m.proc.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = m.proc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = m.proc.Process.Kill()
		<-done
	}
	m.proc = nil
}

func (c *testCluster) endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.client)
	}
	return eps
}

func (c *testCluster) client() *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints(), DialTimeout: 2 * time.Second})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { cli.Close() })
	return cli
}

// versions are the etcd versions the tests run on: the embedded one, and
// Debian's etcd-server (3.4) where installed (true: 3.4).
func versions(t *testing.T) map[string]bool {
	vs := map[string]bool{"embedded": false}
	if _, err := os.Stat(etcd34); err == nil {
		vs["3.4"] = true
	} else {
		t.Logf("etcd 3.4 (Debian's etcd-server) not installed at %s: only the embedded etcd is tried", etcd34)
	}
	return vs
}

var opts = clusterstate.Options{Rounds: 3, Interval: 300 * time.Millisecond, Reads: 3}

// read reads the state of the cluster at endpoints and judges it as a
// live command does.
func read(t *testing.T, endpoints ...string) (*result.ClusterState, []result.Finding) {
	t.Helper()
	ctx := context.Background()
	d, err := cluster.Discover(ctx, cluster.ConnOptions{Endpoints: endpoints, DialTimeout: time.Second, CommandTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st, err := clusterstate.Read(ctx, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &result.Result{Kind: result.KindMetrics, Cluster: st}
	var fs []result.Finding
	for _, f := range diagnose.Run(r) {
		if strings.HasPrefix(f.ID, "cluster_") {
			fs = append(fs, f)
		}
	}
	var text strings.Builder
	render.ClusterStateText(&text, st)
	t.Logf("%s  findings:\n    %s", text.String(), strings.Join(ids(fs), "\n    "))
	for _, m := range st.Members {
		if m.Requests > opts.Requests() {
			t.Errorf("%s was sent %d requests, more than the %d a read sends at most", label(m), m.Requests, opts.Requests())
		}
	}
	return st, fs
}

func label(m result.ClusterMember) string { return m.Name + " " + m.Endpoint }

// finding returns the finding id, nil when there is none.
func finding(fs []result.Finding, id string) *result.Finding {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}

func ids(fs []result.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID+": "+f.Title)
	}
	return out
}

// TestReadFaults reads a healthy 3-member cluster, then the same cluster
// with an endpoint of a second cluster in the list, with a member whose
// database was altered while it was stopped, with that member stopped,
// and with its quota full: each fault is named, with its member, on each
// etcd version.
func TestReadFaults(t *testing.T) {
	for version, v34 := range versions(t) {
		t.Run(version, func(t *testing.T) {
			c := newCluster(t, v34, "agree", 3, 4<<20)
			cli := c.client()
			ctx := context.Background()
			for i := range 20 {
				if _, err := cli.Put(ctx, fmt.Sprintf("/state-test/%d", i), "value"); err != nil {
					t.Fatal(err)
				}
			}

			st, fs := read(t, c.endpoints()...)
			if len(fs) != 0 {
				t.Errorf("healthy: findings %v", ids(fs))
			}
			leader := ""
			for _, m := range st.Members {
				if !m.Listed || !m.Given || m.ClusterID != st.ClusterID || !m.Hashed || len(m.StatusRounds) != opts.Rounds || m.Unreachable != "" {
					t.Errorf("healthy: member %+v", m)
				}
				if leader == "" {
					leader = m.Leader
				}
				if m.Leader != leader || m.Term == 0 || m.RaftIndex == 0 || m.AppliedIndex == 0 || m.Revision < 21 || m.DBSize <= 0 || m.Version == "" {
					t.Errorf("healthy: %s: leader %s (want %s), term %d, raft %d, applied %d, revision %d, db %d, version %q",
						m.Name, m.Leader, leader, m.Term, m.RaftIndex, m.AppliedIndex, m.Revision, m.DBSize, m.Version)
				}
				if m.Serializable == nil || m.Serializable.Count != opts.Reads || m.Serializable.Errors != 0 || m.Linearizable == nil || m.Linearizable.Median <= 0 {
					t.Errorf("healthy: %s: reads %+v %+v", m.Name, m.Serializable, m.Linearizable)
				}
			}
			if len(st.Members) != 3 || st.HashRevision < 21 || len(st.Alarms) != 0 || st.AlarmsError != "" {
				t.Errorf("healthy: %d members, hash revision %d, alarms %v %q", len(st.Members), st.HashRevision, st.Alarms, st.AlarmsError)
			}

			t.Run("an endpoint of another cluster", func(t *testing.T) {
				other := newCluster(t, v34, "other", 1, 0)
				_, fs := read(t, append(c.endpoints(), other.members[0].client)...)
				f := finding(fs, "cluster_foreign_endpoint")
				if f == nil || f.Severity != result.Critical || !strings.Contains(f.Title, other.members[0].client) || len(fs) != 1 {
					t.Errorf("findings %v; want %s named not a member", ids(fs), other.members[0].client)
				}
			})

			victim := c.members[2]
			t.Run("a member whose database was altered while it was stopped", func(t *testing.T) {
				c.stop(2)
				alter(t, filepath.Join(victim.dir, "member", "snap", "db"))
				if err := c.start(2); err != nil {
					t.Fatal(err)
				}
				_, fs := read(t, c.endpoints()...)
				f := finding(fs, "cluster_hash_differs")
				if f == nil || f.Severity != result.Critical || !strings.Contains(f.Title, "The key-value store of "+victim.name+" differs") || len(fs) != 1 {
					t.Errorf("findings %v; want %s's store named as differing", ids(fs), victim.name)
				}
			})

			t.Run("a stopped member", func(t *testing.T) {
				c.stop(2)
				st, fs := read(t, c.endpoints()...)
				f := finding(fs, "cluster_member_unreachable")
				if f == nil || f.Severity != result.Critical || !strings.Contains(f.Title, victim.name) || len(fs) != 1 {
					t.Errorf("findings %v; want %s unreachable", ids(fs), victim.name)
				}
				hashed := 0
				for _, m := range st.Members {
					if m.Hashed {
						hashed++
					}
				}
				if hashed != 2 {
					t.Errorf("%d members hashed; want the 2 that answer", hashed)
				}
			})

			t.Run("a member whose peer link is delayed", func(t *testing.T) {
				slow := newCluster(t, v34, "slowlink", 3, 0, memberFault{}, memberFault{}, memberFault{delay: netfault.Delay{Latency: 200 * time.Millisecond}})
				victim := slow.members[2]
				// The member behind the slow link must not lead: as leader,
				// every member's linearizable reads would wait for it.
				slow.notLeader(2)
				_, fs := read(t, slow.endpoints()...)
				f := finding(fs, "cluster_read_index_slow")
				if f == nil || !strings.Contains(f.Title, "Linearizable reads at "+victim.name) || len(fs) != 1 ||
					!strings.Contains(f.Evidence[0].What, "the time went between "+victim.name+" and the leader") {
					t.Errorf("findings %v; want %s's linearizable reads slow at the leader's ReadIndex, the link to the leader named", ids(fs), victim.name)
				}
			})

			t.Run("a member on a slow disk under load", func(t *testing.T) {
				if err := lab.SlowDiskSupported(); err != nil {
					t.Skipf("skipped: %v", err)
				}
				slow := newCluster(t, v34, "slowdisk", 3, 0, memberFault{}, memberFault{}, memberFault{slowFsync: 1500 * time.Millisecond})
				victim := slow.members[2]
				slow.notLeader(2)
				victim.slow.SetFsyncDelay(victim.fault.slowFsync)
				stop := slow.load(100, slow.endpoints()[:2])
				defer stop()
				time.Sleep(2 * time.Second) // the gap forms
				_, fs := read(t, slow.endpoints()...)
				victim.slow.SetFsyncDelay(0) // a quick stop
				// etcd 3.4's follower falls behind in its committed index;
				// 3.6 and later apply what a quorum committed while their own
				// write goes on, and answer Status once it ends: in bursts,
				// its linearizable reads waiting for its apply.
				named := false
				for _, f := range fs {
					switch {
					case !strings.HasPrefix(f.Title, victim.name+" ") && !strings.HasPrefix(f.Title, "Linearizable reads at "+victim.name+" "):
					case f.ID == "cluster_member_behind", f.ID == "cluster_member_apply_behind":
						named = true
					case f.ID == "cluster_read_index_slow":
						named = true
						if !strings.Contains(f.Evidence[0].What, victim.name+"'s own raft loop") {
							t.Errorf("%s's slow linearizable reads are not said to be possibly its own apply: %s", victim.name, f.Evidence[0].What)
						}
					}
				}
				if !named {
					t.Errorf("findings %v; want %s behind the leader, or its linearizable reads slow", ids(fs), victim.name)
				}
			})

			t.Run("a full quota", func(t *testing.T) {
				value := strings.Repeat("x", 512<<10)
				var err error
				for i := 0; i < 64 && err == nil; i++ {
					_, err = cli.Put(ctx, fmt.Sprintf("/state-test/big/%d", i), value)
				}
				if !errors.Is(rpctypes.Error(err), rpctypes.ErrNoSpace) {
					t.Fatalf("filling a 4 MiB quota: %v; want %v", err, rpctypes.ErrNoSpace)
				}
				_, fs := read(t, c.endpoints()[:2]...)
				f := finding(fs, "cluster_alarm")
				if f == nil || f.Severity != result.Critical || !strings.Contains(f.Title, "Alarm NOSPACE raised on") {
					t.Errorf("findings %v; want the NOSPACE alarm", ids(fs))
				}
			})

			t.Run("offline, which member is newest", func(t *testing.T) {
				// The cluster lost: each member's database, read where it
				// stopped. The altered member is behind too (it stopped
				// before the quota was filled).
				var paths []string
				for i, m := range c.members {
					c.stop(i)
					paths = append(paths, filepath.Join(m.dir, "member", "snap", "db"))
				}
				cmp, err := dbfile.Compare(context.Background(), paths)
				if err != nil {
					t.Fatal(err)
				}
				r := &result.Result{Kind: result.KindDB, DBMembers: cmp}
				judge.Judge(r, limits.Table)
				var titles []string
				for _, f := range r.Findings {
					titles = append(titles, f.ID+": "+f.Title)
				}
				t.Logf("%s\n  %s", r.Summary, strings.Join(titles, "\n  "))
				diverged, newest := finding(r.Findings, "db_members_diverged"), finding(r.Findings, "db_members_newest")
				if diverged == nil || !strings.HasPrefix(diverged.Title, paths[2]+" diverged") || newest == nil ||
					(!strings.HasPrefix(newest.Title, "Restore from "+paths[0]) && !strings.HasPrefix(newest.Title, "Restore from "+paths[1])) ||
					r.Verdict != result.Fail {
					t.Errorf("verdict %s, findings %v; want %s diverged and the newest of the others to restore from", r.Verdict, titles, paths[2])
				}
			})
		})
	}
}

// alter changes the value of the newest key in the bbolt database at
// path, as a disk that corrupted one page would, keeping it readable.
func alter(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return errors.New("no key bucket")
		}
		k, v := b.Cursor().Last()
		var kv mvccpb.KeyValue
		if err := proto.Unmarshal(v, &kv); err != nil {
			return err
		}
		kv.Value = []byte(strings.ToUpper(string(kv.Value)))
		out, err := proto.Marshal(&kv)
		if err != nil {
			return err
		}
		return b.Put(slices.Clone(k), out)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// load puts rate keys/s through endpoints in a goroutine, each a new key
// (at most 20 s of them), until the returned function is called.
func (c *testCluster) load(rate int, endpoints []string) (stop func()) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second})
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			wg.Go(func() {
				pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
				defer pcancel()
				_, _ = cli.Put(pctx, fmt.Sprintf("/state-test/load/%d", i), "value")
			})
		}
	})
	return func() {
		cancel()
		wg.Wait()
		cli.Close()
	}
}

// notLeader moves the leadership off member i, if it leads.
func (c *testCluster) notLeader(i int) {
	t := c.t
	m := c.members[i]
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client}, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := cli.Status(ctx, m.client)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if st.Leader != st.Header.MemberId {
			cancel()
			return
		}
		if attempt == 3 {
			cancel()
			t.Fatalf("%s still leads", m.name)
		}
		ms, err := cli.MemberList(ctx)
		if err == nil {
			to := ms.Members[0].ID
			if to == st.Header.MemberId {
				to = ms.Members[1].ID
			}
			_, err = cli.MoveLeader(ctx, to)
		}
		cancel()
		if err != nil {
			t.Logf("move the leadership off %s: %v", m.name, err)
		}
	}
}
