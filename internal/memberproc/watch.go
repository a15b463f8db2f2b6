package memberproc

import (
	"net/url"
	"os"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/procstats"
	"github.com/etcdperf/etcdperf/internal/result"
)

// Watcher follows the member processes that run on this host over a
// run: the members etcdperf started, and those listening on a loopback
// address.
type Watcher struct {
	members []*Process
	first   []Snapshot
	// fixed are members whose process cannot be measured, with why.
	fixed []result.MemberProcess
}

// Watch finds the members that run on this host and takes the
// first reading of each.
func Watch(members []cluster.Member) *Watcher {
	p := &Watcher{}
	for _, m := range members {
		pid, found := localProcess(m)
		if pid == 0 {
			continue
		}
		if pid == os.Getpid() {
			// Its threads' waits are still its own: if the whole process got
			// a CPU promptly, etcd's threads did; its CPU use includes the
			// load generator's.
			found = "etcdperf's own process, with the load generator"
		}
		hm, err := Open(m.Name, pid, found)
		if err != nil {
			host, _ := os.Hostname()
			p.fixed = append(p.fixed, result.MemberProcess{Name: m.Name, Host: host, PID: pid, Found: found, Error: err.Error()})
			continue
		}
		p.members = append(p.members, hm)
		p.first = append(p.first, hm.Take())
	}
	return p
}

// localProcess returns the process of a member that runs on this host,
// and how it was found; 0 when it runs elsewhere (or cannot be seen).
func localProcess(m cluster.Member) (int, string) {
	if m.PID > 0 {
		return m.PID, "started by etcdperf"
	}
	u, err := url.Parse(m.ClientURL)
	if err != nil || !procstats.IsLoopback(u.Hostname()) {
		return 0, ""
	}
	pid, err := procstats.Host.Listener(u.Host)
	if err != nil {
		return 0, ""
	}
	return pid, "listening on " + u.Host
}

// Since returns each member process's figures from the first reading to
// now, by member name order of the watch.
func (p *Watcher) Since() []result.MemberProcess {
	if p == nil {
		return nil
	}
	out := append([]result.MemberProcess(nil), p.fixed...)
	for i, m := range p.members {
		out = append(out, m.Between(p.first[i], m.Take()))
	}
	return out
}
