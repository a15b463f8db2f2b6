package procstats

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNotFound says that no process of this host owns the address.
var ErrNotFound = errors.New("no process of this host listens there")

// IsLoopback reports whether host (a name or an address, without port) is
// this host's loopback.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Listener returns the process that listens on the TCP address host:port
// (one of its own addresses, or a wildcard one on that port). It needs to
// see the other processes' file descriptors (root, or the same user).
func (p Proc) Listener(addr string) (int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return 0, fmt.Errorf("port %q is not a number", portStr)
	}
	want := net.ParseIP(host)
	if host == "localhost" {
		want = net.IPv4(127, 0, 0, 1)
	}
	var inodes []string
	for _, f := range []string{"tcp", "tcp6"} {
		fh, err := os.Open(p.path("net", f))
		if err != nil {
			continue // no IPv6
		}
		ls, err := ParseListeners(fh)
		fh.Close()
		if err != nil {
			return 0, err
		}
		for _, l := range ls {
			if l.Port == port && (l.IP.IsUnspecified() || want == nil || l.IP.Equal(want)) {
				inodes = append(inodes, l.Inode)
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("%s: %w", addr, ErrNotFound)
	}
	pid, err := p.socketOwner(inodes)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", addr, err)
	}
	return pid, nil
}

// Listen is one listening TCP socket of /proc/net/tcp or tcp6.
type Listen struct {
	IP    net.IP
	Port  int
	Inode string
}

// ParseListeners reads the listening sockets (state 0A) of /proc/net/tcp or
// /proc/net/tcp6 text.
func ParseListeners(r io.Reader) ([]Listen, error) {
	var out []Listen
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		ipHex, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseUint(portHex, 16, 16)
		if err != nil {
			return nil, fmt.Errorf("/proc/net/tcp: bad port %q", portHex)
		}
		ip, err := kernelIP(ipHex)
		if err != nil {
			return nil, err
		}
		out = append(out, Listen{IP: ip, Port: int(port), Inode: f[9]})
	}
	return out, sc.Err()
}

// kernelIP decodes an address as /proc/net/tcp prints it: 32-bit words in
// the host's (little-endian) byte order.
func kernelIP(s string) (net.IP, error) {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return nil, fmt.Errorf("/proc/net/tcp: bad address %q", s)
	}
	ip := make(net.IP, len(b))
	for i := 0; i < len(b); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.LittleEndian.Uint32(b[i:]))
	}
	return ip, nil
}

// socketOwner finds the process that has one of the socket inodes open.
func (p Proc) socketOwner(inodes []string) (int, error) {
	want := map[string]bool{}
	for _, in := range inodes {
		want["socket:["+in+"]"] = true
	}
	ents, err := os.ReadDir(string(p))
	if err != nil {
		return 0, err
	}
	denied := false
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(p.path(e.Name(), "fd"))
		if err != nil {
			denied = denied || errors.Is(err, os.ErrPermission)
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(p.path(e.Name(), "fd", fd.Name())); err == nil && want[l] {
				return pid, nil
			}
		}
	}
	if denied {
		return 0, fmt.Errorf("%w that this user may see (run as root to see every process)", ErrNotFound)
	}
	return 0, ErrNotFound
}

// EtcdFiles are the files of etcd's data dir that a member process holds
// open: its write-ahead log and its backend database.
type EtcdFiles struct {
	// WALDir is the folder of the member's open *.wal files (etcd's
	// --wal-dir, or <data dir>/member/wal).
	WALDir string
	// DB is the member's bbolt database (<data dir>/member/snap/db).
	DB string
}

// DataDir is the member's data dir, as its database's path says.
func (f EtcdFiles) DataDir() string {
	if f.DB == "" {
		return ""
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(f.DB)))
}

// OpenEtcdFiles finds the WAL and database files that process pid holds
// open; an error when it holds neither (not an etcd member).
func (p Proc) OpenEtcdFiles(pid int) (EtcdFiles, error) {
	var f EtcdFiles
	dir := p.path(strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return f, fmt.Errorf("read the open files of process %d: %w", pid, err)
	}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue
		}
		switch {
		case strings.HasSuffix(l, ".wal") && f.WALDir == "":
			f.WALDir = filepath.Dir(l)
		case filepath.Base(l) == "db" && filepath.Base(filepath.Dir(l)) == "snap":
			f.DB = l
		}
	}
	if f.WALDir == "" && f.DB == "" {
		return f, fmt.Errorf("process %d has no etcd WAL or database open: it is not an etcd member", pid)
	}
	return f, nil
}
