package discover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/result"
)

// NotFoundError says that no etcd configuration was found on the node,
// what was looked at, and the files that could not be used.
type NotFoundError struct{ D *result.Discover }

func (e *NotFoundError) Error() string {
	where := ""
	if e.D.Root != "/" {
		where = " under " + e.D.Root
	}
	msg := fmt.Sprintf("no etcd found on this node%s; looked at %s", where, strings.Join(e.D.Looked, ", "))
	for _, p := range e.D.Problems {
		msg += fmt.Sprintf("; %s: %s", p.File, p.Error)
	}
	for _, p := range e.D.NoSettings {
		msg += fmt.Sprintf("; %s: read, no etcd settings", p)
	}
	return msg
}

// Node is the etcd member `etcdperf doctor --node` judges: the one found
// on this node's files, how to reach it, and where its data is.
type Node struct {
	// Found is the configuration taken: the first one discovered, else,
	// when flags name no endpoints, the first one whose endpoints on
	// this host do not refuse a connection.
	Found result.FoundEtcd
	// Others are the other configurations found, not taken.
	Others []string
	// Conn reaches it: the discovered endpoints and certificates unless
	// flags or etcdctl's variables set them.
	Conn cluster.ConnOptions
	// DataDir is its data dir as seen from here (under the root).
	DataDir string
	// LogFile is its log file as seen from here, when it is a file
	// (kubelet's pod log); empty when it is only in the journal.
	LogFile string
	// Unit is the systemd unit whose journal holds its log (read with
	// journalctl under Root) when it has no LogFile.
	Unit string
	// Root is where the node's files are (/ on the node itself).
	Root string
}

// Name names the member in the Result and its findings.
func (n *Node) Name() string {
	name := n.Found.Name
	if name == "" {
		name = "etcd"
	}
	return fmt.Sprintf("member %s (%s, %s)", name, n.Found.Source, n.Found.File)
}

// ProbeParent is where the disk probe's folder is made: beside the data
// dir, on the same file system. When the data dir is a file system of its
// own (a dedicated etcd disk, as etcd's hardware guide recommends), the
// folder is made in the data dir, beside member/ and never inside it:
// etcd reads only member/ (at start it logs any other entry as unexpected
// and goes on), and the folder is removed at the end of the run.
func (n *Node) ProbeParent() string {
	parent := filepath.Dir(filepath.Clean(n.DataDir))
	var d, p syscall.Stat_t
	if syscall.Stat(n.DataDir, &d) == nil && syscall.Stat(parent, &p) == nil && d.Dev != p.Dev {
		return n.DataDir
	}
	return parent
}

// CheckProbeBeside fails when the disk probe cannot run beside the data
// dir on its file system: the data dir or its parent is missing.
func (n *Node) CheckProbeBeside() error {
	if _, err := os.Stat(n.DataDir); err != nil {
		return fmt.Errorf("the data dir %s: %w; give --disk-runtime 0 to skip the disk probe", n.DataDir, unwrapPathError(err))
	}
	if _, err := os.Stat(n.ProbeParent()); err != nil {
		return fmt.Errorf("beside the data dir, %s: %w; give --disk-runtime 0 to skip the disk probe", n.ProbeParent(), unwrapPathError(err))
	}
	return nil
}

// unwrapPathError drops the path of a *fs.PathError that the message
// already names.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Resolve finds the etcd on the node whose files are under root and
// how to reach it: conn's endpoints and certificates win over the
// discovered ones. No etcd is a *NotFoundError. Unless conn names the
// endpoints, it takes the first etcd found that nothing refuses at its
// endpoints on this host (CheckListeners), and when nothing listens at
// any of them it is a *NotListeningError. A certificate file that does
// not exist is an error naming it.
func Resolve(root string, conn cluster.ConnOptions) (*Node, error) {
	d, err := Find(root)
	if err != nil {
		return nil, err
	}
	if len(d.Found) == 0 {
		return nil, &NotFoundError{D: d}
	}
	taken := 0
	if len(conn.Endpoints) == 0 {
		// Bounded by the dial timeout of each of a few endpoints.
		CheckListeners(context.Background(), d)
		if err := AllNotListening(d); err != nil {
			return nil, err
		}
		for len(d.Found[taken].NothingListens) > 0 {
			taken++
		}
	}
	f := d.Found[taken]
	n := &Node{Found: f, Conn: conn}
	for i, o := range d.Found {
		if i == taken {
			continue
		}
		other := o.Source + " (" + o.File + ")"
		if len(o.NothingListens) > 0 {
			other = o.Source + " (" + o.File + ", nothing listens at " + strings.Join(o.NothingListens, ", ") + ")"
		}
		n.Others = append(n.Others, other)
	}
	under := func(p string) string {
		if p == "" {
			return ""
		}
		return filepath.Join(d.Root, filepath.FromSlash(p))
	}
	if len(conn.Endpoints) == 0 {
		if len(f.Endpoints) == 0 {
			return nil, fmt.Errorf("the %s etcd in %s has no client URL; give --endpoints", f.Source, f.File)
		}
		n.Conn.Endpoints = f.Endpoints
		n.Conn.EndpointsFrom = f.Source + " " + f.File
	}
	if !conn.TLSConfigured() {
		n.Conn.CACert, n.Conn.Cert, n.Conn.Key = under(f.CACert), under(f.Cert), under(f.Key)
	}
	var missing []string
	for _, p := range []string{n.Conn.CACert, n.Conn.Cert, n.Conn.Key} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the %s etcd's certificate files are missing: %s; give --cacert, --cert and --key (or ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY)",
			f.Source, strings.Join(missing, ", "))
	}
	if f.DataDir == "" {
		return nil, fmt.Errorf("the %s etcd in %s names no data dir, so its disk cannot be probed", f.Source, f.File)
	}
	n.DataDir = under(f.DataDir)
	if strings.HasPrefix(f.Log, "/") {
		n.LogFile = under(f.Log)
	}
	n.Unit, n.Root = f.Unit, d.Root
	return n, nil
}

// MakeProbeDir creates the disk probe's own folder beside the member's
// data dir; the caller removes it.
func MakeProbeDir(n *Node, runID string) (string, error) {
	dir := filepath.Join(n.ProbeParent(), ".etcdperf-probe-"+runID)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("disk probe beside the data dir: %w", err)
	}
	return dir, nil
}
