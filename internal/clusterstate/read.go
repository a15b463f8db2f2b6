// Package clusterstate reads a cluster's own state as its members tell it
// on call, as etcd's own diagnosis tools do (etcdctl endpoint status,
// alarm list, endpoint hashkv; etcd-diagnosis): each member's identity,
// the leader it sees, its raft term, committed and applied index and
// revision, a few times about a second apart; the alarms raised; a few
// serializable and linearizable reads of one key per member; and every
// member's HashKV at one revision they all have. It only reads: Status,
// AlarmList, HashKV and Range requests, a bounded number of each, each
// bounded by the command timeout.
package clusterstate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/result"
)

// ReadKey is the key the reads ask for, as etcdctl endpoint health does:
// it need not exist, and nothing is written to it.
const ReadKey = "health"

// Options bound a read of the cluster's state.
type Options struct {
	// Rounds of Status, Interval apart (defaults 3 and 1s): a gap that
	// closes is told from one that stays or grows.
	Rounds   int
	Interval time.Duration
	// Reads of each kind (serializable, linearizable) per member (default
	// 5).
	Reads int
	// HashAttempts bounds the HashKV rounds (default 3): a compaction
	// between two members' answers asks again.
	HashAttempts int
}

func (o Options) withDefaults() Options {
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Reads <= 0 {
		o.Reads = 5
	}
	if o.HashAttempts <= 0 {
		o.HashAttempts = 3
	}
	return o
}

// Requests is the most requests Read sends one member: a status per
// round, the reads, a status and a hash per hash attempt, and the alarm
// list (sent once, to the leader).
func (o Options) Requests() int {
	o = o.withDefaults()
	return o.Rounds + 2*o.Reads + 2*o.HashAttempts + 1
}

// reader is one read in progress.
type reader struct {
	d       *cluster.Discovery
	o       Options
	timeout time.Duration
	cli     *clientv3.Client
	st      *result.ClusterState
	mu      sync.Mutex
}

// Read reads the state of the cluster d discovered: its listed members and
// every endpoint given that is not one of them. It fails only when no
// client can be opened; what a member did not answer is said in its entry.
func Read(ctx context.Context, d *cluster.Discovery, o Options) (*result.ClusterState, error) {
	o = o.withDefaults()
	st := &result.ClusterState{Rounds: o.Rounds, Interval: o.Interval.Seconds()}
	for _, m := range d.Members {
		cm := result.ClusterMember{Name: m.Name, Endpoint: m.ClientURL, Listed: true}
		if m.ID != 0 {
			cm.ID = fmt.Sprintf("%x", m.ID)
		}
		if m.ClientURL == "" {
			cm.Unreachable = "it advertises no client URL (a member added but not started)"
		}
		st.Members = append(st.Members, cm)
	}
	for _, ep := range d.Given {
		i := slices.IndexFunc(st.Members, func(m result.ClusterMember) bool { return sameURL(m.Endpoint, ep) })
		if i >= 0 {
			st.Members[i].Given = true
			continue
		}
		st.Members = append(st.Members, result.ClusterMember{Endpoint: ep, Given: true})
	}
	var urls []string
	for _, m := range st.Members {
		if m.Endpoint != "" {
			urls = append(urls, m.Endpoint)
		}
	}
	cli, err := d.Dial(ctx, urls...)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	r := &reader{d: d, o: o, timeout: d.CommandTimeout(), cli: cli, st: st}
	r.statusRounds(ctx)
	r.identify()
	r.alarms(ctx)
	r.reads(ctx)
	r.hashes(ctx)
	return st, ctx.Err()
}

// sameURL compares two client URLs, ignoring a trailing slash.
func sameURL(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}

// each runs f for every member with an endpoint, in parallel.
func (r *reader) each(f func(i int, m *result.ClusterMember)) {
	var wg sync.WaitGroup
	for i := range r.st.Members {
		m := &r.st.Members[i]
		if m.Endpoint == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i, m)
		}()
	}
	wg.Wait()
}

// status asks one member for its status, bounded by the command timeout
// (a member on a slow disk may take a while: etcd reads its backend's
// size for it).
func (r *reader) status(ctx context.Context, m *result.ClusterMember) (*clientv3.StatusResponse, error) {
	sctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	r.mu.Lock()
	m.Requests++
	r.mu.Unlock()
	return r.cli.Status(sctx, m.Endpoint)
}

// statusRounds asks every member for its status, Rounds times, Interval
// apart; a member's last answer fills its entry.
func (r *reader) statusRounds(ctx context.Context) {
	start := time.Now()
	for round := 0; round < r.o.Rounds && ctx.Err() == nil; round++ {
		if round > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(start.Add(time.Duration(round) * r.o.Interval))):
			}
		}
		r.each(func(_ int, m *result.ClusterMember) {
			resp, err := r.status(ctx, m)
			sr := result.StatusRound{T: time.Since(start).Seconds()}
			if err != nil {
				sr.Error = explain(err)
				m.StatusRounds = append(m.StatusRounds, sr)
				return
			}
			sr.Leader, sr.Term, sr.RaftIndex, sr.AppliedIndex = hexID(resp.Leader), resp.RaftTerm, resp.RaftIndex, resp.RaftAppliedIndex
			if resp.Header != nil {
				sr.Revision = resp.Header.Revision
				m.ID, m.ClusterID = hexID(resp.Header.MemberId), hexID(resp.Header.ClusterId)
			}
			m.StatusRounds = append(m.StatusRounds, sr)
			m.Leader, m.Term, m.RaftIndex, m.AppliedIndex, m.Revision = sr.Leader, sr.Term, sr.RaftIndex, sr.AppliedIndex, sr.Revision
			m.Version, m.StorageVersion, m.Learner = resp.Version, resp.StorageVersion, resp.IsLearner
			m.DBSize, m.DBSizeInUse, m.DBSizeQuota, m.Errors = resp.DbSize, resp.DbSizeInUse, resp.DbSizeQuota, resp.Errors
		})
	}
}

// identify names the cluster most members answered for, matches an
// endpoint given to the listed member it turned out to be, and says why a
// member never answered.
func (r *reader) identify() {
	st := r.st
	count := map[string]int{}
	for _, m := range st.Members {
		if m.ClusterID != "" {
			count[m.ClusterID]++
		}
	}
	best := ""
	for id, n := range count {
		if best == "" || n > count[best] || n == count[best] && id < best {
			best = id
		}
	}
	st.ClusterID = best
	// An endpoint given under another URL than the member list's (a
	// host name, another address): the same member ID is the same member.
	var kept []result.ClusterMember
	for _, m := range st.Members {
		if !m.Listed && m.ID != "" {
			if i := slices.IndexFunc(st.Members, func(o result.ClusterMember) bool { return o.Listed && o.ID == m.ID && o.ClusterID == m.ClusterID }); i >= 0 {
				st.Members[i].Given = true
				continue
			}
		}
		kept = append(kept, m)
	}
	st.Members = kept
	// The listed members by name, then the endpoints no member list names.
	slices.SortStableFunc(st.Members, func(a, b result.ClusterMember) int {
		if a.Listed != b.Listed {
			if a.Listed {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name+" "+a.Endpoint, b.Name+" "+b.Endpoint)
	})
	for i := range st.Members {
		m := &st.Members[i]
		if m.Unreachable == "" && !m.Answered() && len(m.StatusRounds) > 0 {
			m.Unreachable = m.StatusRounds[len(m.StatusRounds)-1].Error
		}
	}
}

// alarms lists the alarms raised: one request, to the leader (the member
// that answered as its own leader; etcd answers an alarm list through
// raft, and a member behind would answer late), else to any member.
func (r *reader) alarms(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cli := r.cli
	if l := r.leader(); l != nil {
		if lc, err := r.d.Dial(ctx, l.Endpoint); err == nil {
			defer lc.Close()
			cli = lc
			r.mu.Lock()
			l.Requests++
			r.mu.Unlock()
		}
	}
	resp, err := cli.AlarmList(actx)
	if err != nil {
		r.st.AlarmsError = explain(err)
		return
	}
	for _, a := range resp.Alarms {
		ca := result.ClusterAlarm{MemberID: hexID(a.MemberID), Alarm: a.Alarm.String()}
		if i := slices.IndexFunc(r.st.Members, func(m result.ClusterMember) bool { return m.ID == ca.MemberID && m.Listed }); i >= 0 {
			ca.Member = r.st.Members[i].Name
		}
		r.st.Alarms = append(r.st.Alarms, ca)
	}
}

// leader is the listed member of the cluster that answered as its own
// leader in its last status round, nil when none did.
func (r *reader) leader() *result.ClusterMember {
	for i := range r.st.Members {
		m := &r.st.Members[i]
		if m.Listed && m.ClusterID == r.st.ClusterID && m.Answered() && m.ID != "" && m.Leader == m.ID {
			return m
		}
	}
	return nil
}

// reads times Reads serializable and Reads linearizable reads of ReadKey
// at every member that answered, each on a client of its own.
func (r *reader) reads(ctx context.Context) {
	r.each(func(_ int, m *result.ClusterMember) {
		if !m.Answered() {
			return
		}
		cli, err := r.d.Dial(ctx, m.Endpoint)
		if err != nil {
			m.Serializable = &result.ReadTimes{Error: explain(err)}
			return
		}
		defer cli.Close()
		m.Serializable = r.timeReads(ctx, cli, m, clientv3.WithSerializable())
		m.Linearizable = r.timeReads(ctx, cli, m)
	})
}

func (r *reader) timeReads(ctx context.Context, cli *clientv3.Client, m *result.ClusterMember, opts ...clientv3.OpOption) *result.ReadTimes {
	rt := &result.ReadTimes{}
	var times []float64
	for range r.o.Reads {
		if ctx.Err() != nil {
			break
		}
		gctx, cancel := context.WithTimeout(ctx, r.timeout)
		start := time.Now()
		_, err := cli.Get(gctx, ReadKey, opts...)
		took := time.Since(start).Seconds()
		cancel()
		r.mu.Lock()
		m.Requests++
		r.mu.Unlock()
		rt.Count++
		if err != nil {
			rt.Errors++
			if rt.Error == "" {
				rt.Error = explain(err)
			}
			continue
		}
		times = append(times, took)
	}
	if len(times) > 0 {
		sort.Float64s(times)
		rt.Min, rt.Median, rt.Max = times[0], times[len(times)/2], times[len(times)-1]
	}
	return rt
}

// hashes asks every member of the cluster for its HashKV at one revision
// they all have: the lowest current revision among them, which is at or
// after the compaction (the same for all). A member whose answer starts
// from another compaction than the others' (a compaction applied between
// two answers) makes all of them ask again, at most HashAttempts times.
func (r *reader) hashes(ctx context.Context) {
	st := r.st
	in := func(m *result.ClusterMember) bool {
		return m.Listed && m.ClusterID == st.ClusterID && m.Answered() && !m.Learner
	}
	for attempt := 1; attempt <= r.o.HashAttempts && ctx.Err() == nil; attempt++ {
		st.HashAttempts = attempt
		var mu sync.Mutex
		var rev int64
		r.each(func(_ int, m *result.ClusterMember) {
			if !in(m) {
				return
			}
			resp, err := r.status(ctx, m)
			if err != nil || resp.Header == nil {
				return
			}
			mu.Lock()
			if rev == 0 || resp.Header.Revision < rev {
				rev = resp.Header.Revision
			}
			mu.Unlock()
		})
		if rev == 0 {
			st.Notes = append(st.Notes, "no member answered for its revision: the key-value stores were not compared")
			return
		}
		compacts := map[int64]bool{}
		r.each(func(_ int, m *result.ClusterMember) {
			m.Hashed, m.Hash, m.HashError = false, 0, ""
			if !in(m) {
				return
			}
			hctx, cancel := context.WithTimeout(ctx, r.timeout)
			defer cancel()
			r.mu.Lock()
			m.Requests++
			r.mu.Unlock()
			resp, err := r.cli.HashKV(hctx, m.Endpoint, rev)
			if err != nil {
				m.HashError = explain(err)
				return
			}
			m.Hashed, m.Hash = true, resp.Hash
			mu.Lock()
			compacts[resp.CompactRevision] = true
			mu.Unlock()
		})
		st.HashRevision = rev
		compacted := slices.ContainsFunc(st.Members, func(m result.ClusterMember) bool {
			return strings.Contains(m.HashError, rpctypes.ErrCompacted.Error())
		})
		if len(compacts) <= 1 && !compacted {
			for c := range compacts {
				st.CompactRevision = c
			}
			return
		}
	}
	st.Notes = append(st.Notes, fmt.Sprintf("compactions moved under the hashes in %d attempts: the key-value stores were not compared", r.o.HashAttempts))
	for i := range st.Members {
		st.Members[i].Hashed = false
	}
	st.HashRevision = 0
}

// hexID is a member or cluster ID as etcdctl prints it (0: none).
func hexID(id uint64) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf("%x", id)
}

// explain is a failed request's error in one line: etcd's own message
// where it gave one.
func explain(err error) string {
	if ee, ok := rpctypes.Error(err).(rpctypes.EtcdError); ok {
		return ee.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "context deadline exceeded") {
		return "no answer in time (unreachable, or too busy to answer)"
	}
	return err.Error()
}
