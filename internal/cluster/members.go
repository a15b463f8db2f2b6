package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
)

// Member is one etcd member as the cluster reports it, completed with what
// etcdperf knows of the members it started itself.
type Member struct {
	ID   uint64 `json:"id"`
	Name string `json:"name"`
	// ClientURL is the member's first client URL (http(s)://host:port).
	ClientURL string `json:"client_url"`
	// MetricsURL is where the member's Prometheus metrics are served.
	MetricsURL string `json:"metrics_url"`
	PeerURL    string `json:"peer_url,omitempty"`
	Leader     bool   `json:"leader,omitempty"`
	Version    string `json:"version,omitempty"`
	// DataDir and LogFile are known for embedded members only.
	DataDir string `json:"data_dir,omitempty"`
	LogFile string `json:"log_file,omitempty"`
	// PID is the process of an embedded member run as a child process.
	PID int `json:"pid,omitempty"`
	// Fault is what an embedded member suffers on purpose (--fault), in
	// the flag's words.
	Fault string `json:"fault,omitempty"`
}

// MetricsURL returns the /metrics URL of a client URL: etcd serves its
// metrics on the client port unless --listen-metrics-urls says otherwise.
func MetricsURL(clientURL string) string {
	return strings.TrimRight(clientURL, "/") + "/metrics"
}

// Members lists the cluster's members, marks the leader, and asks each
// started member for its version. Members without a client URL (learners
// not yet started) are listed with what is known.
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.commandTimeout())
	defer cancel()
	resp, err := c.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the members of %s: %w", strings.Join(c.opts.Endpoints, ","), err)
	}
	var leader uint64
	var out []Member
	for _, m := range resp.Members {
		mm := c.memberOf(m)
		if mm.ClientURL != "" {
			if st, err := c.Status(ctx, mm.ClientURL); err == nil {
				mm.Version = st.Version
				if leader == 0 {
					leader = st.Leader
				}
			}
		}
		out = append(out, mm)
	}
	if leader == 0 {
		return out, fmt.Errorf("the cluster at %s has no leader", strings.Join(c.opts.Endpoints, ","))
	}
	for i := range out {
		out[i].Leader = out[i].ID == leader
	}
	return out, nil
}

// memberOf is what the member list says of a member: its name and first
// peer and client URLs.
func (c *Client) memberOf(m *etcdserverpb.Member) Member {
	mm := Member{ID: m.ID, Name: m.Name}
	if len(m.PeerURLs) > 0 {
		mm.PeerURL = m.PeerURLs[0]
	}
	if len(m.ClientURLs) > 0 {
		mm.ClientURL = c.withScheme(m.ClientURLs[0])
		mm.MetricsURL = MetricsURL(mm.ClientURL)
	}
	return mm
}

// Leader returns the leader among the members.
func (c *Client) Leader(ctx context.Context) (Member, error) {
	ms, err := c.Members(ctx)
	if err != nil {
		return Member{}, err
	}
	for _, m := range ms {
		if m.Leader {
			if m.ClientURL == "" {
				return m, fmt.Errorf("the leader %s advertises no client URL", m.Name)
			}
			return m, nil
		}
	}
	return Member{}, fmt.Errorf("no member of %s is the leader", strings.Join(c.opts.Endpoints, ","))
}

// withScheme returns a member's advertised client URL with a scheme: a
// bare address gets https when the client uses TLS.
func (c *Client) withScheme(u string) string {
	if strings.Contains(u, "://") {
		return u
	}
	if c.tls != nil {
		return "https://" + u
	}
	return "http://" + u
}

// DefragmentAll connects to the cluster at conn and defragments every
// started member, one at a time, as etcdctl's --auto-defrag does.
func DefragmentAll(ctx context.Context, conn ConnOptions) error {
	c, err := Connect(ctx, conn)
	if err != nil {
		return err
	}
	defer c.Close()
	ms, err := c.Members(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range ms {
		if m.ClientURL == "" {
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, time.Minute)
		if _, err := c.Defragment(dctx, m.ClientURL); err != nil {
			errs = append(errs, fmt.Errorf("defragment member %s at %s: %w", m.Name, m.ClientURL, err))
		}
		cancel()
	}
	return errors.Join(errs...)
}
