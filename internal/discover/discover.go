// Package discover finds, read-only, the etcd that runs on a node from
// the files its installer leaves: kubeadm's static pod manifest, k3s' and
// RKE2's etcd config file, OpenShift's etcd static pod, and a systemd
// etcd's environment or YAML config file. Every path is read under an
// injectable root, as node_exporter reads /proc under --path.procfs. A
// file that sets nothing for etcd is no find; CheckListeners then says
// where nothing listens at a found etcd's endpoints on this host.
package discover

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/etcdperf/etcdperf/internal/result"
)

// The files each source reads, as on the node.
const (
	kubeadmManifest     = "/etc/kubernetes/manifests/etcd.yaml"
	openshiftManifest   = "/etc/kubernetes/manifests/etcd-pod.yaml"
	openshiftRevisions  = "/etc/kubernetes/static-pod-resources/etcd-pod-*/etcd-pod.yaml"
	openshiftCerts      = "/etc/kubernetes/static-pod-resources/etcd-certs"
	etcdConfYAML        = "/etc/etcd/etcd.conf.yml"
	defaultClientURL    = "http://localhost:2379"
	maxConfigFileLength = 4 << 20
)

// systemdEnvFiles are the environment files of etcd's systemd unit:
// Debian's etcd-server, and the RPM packages'.
var systemdEnvFiles = []string{"/etc/default/etcd", "/etc/etcd/etcd.conf", "/etc/sysconfig/etcd"}

// Find reads the node's files under root and returns every etcd found, in
// the order kubeadm, k3s, RKE2, OpenShift, systemd. A file that exists but
// cannot be read or parsed is a Problem; one that sets nothing for etcd
// (only comments, as a package installs it) is listed in NoSettings and is
// no find; the other sources are still read. It fails only when root is
// not a directory. It only reads files: CheckListeners tries the
// endpoints.
func Find(root string) (*result.Discover, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("--root %s: %w", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("--root %s: %w", root, unwrapPath(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--root %s is not a directory", root)
	}
	f := &finder{root: abs, d: &result.Discover{Root: abs}}
	f.kubeadm()
	f.rancher("k3s")
	f.rancher("rke2")
	f.openshift()
	f.systemd()
	return f.d, nil
}

type finder struct {
	root string
	d    *result.Discover
}

// host returns the path of the node's file p under the root.
func (f *finder) host(p string) string { return filepath.Join(f.root, filepath.FromSlash(p)) }

func (f *finder) exists(p string) bool {
	_, err := os.Stat(f.host(p))
	return err == nil
}

func (f *finder) problem(file string, err error) {
	f.d.Problems = append(f.d.Problems, result.DiscoverProblem{File: file, Error: err.Error()})
}

// read returns the node's file p, or nil when it does not exist; any other
// failure is recorded as a problem.
func (f *finder) read(p string) []byte {
	b, err := os.ReadFile(f.host(p))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			f.problem(p, unwrapPath(err))
		}
		return nil
	}
	if len(b) > maxConfigFileLength {
		f.problem(p, fmt.Errorf("%d bytes, too large for a configuration file", len(b)))
		return nil
	}
	return b
}

// glob returns the node's paths that match pattern, sorted.
func (f *finder) glob(pattern string) []string {
	m, _ := filepath.Glob(f.host(pattern)) // the patterns are constants: no ErrBadPattern
	var out []string
	for _, p := range m {
		rel, err := filepath.Rel(f.root, p)
		if err != nil {
			continue
		}
		out = append(out, "/"+filepath.ToSlash(rel))
	}
	sort.Strings(out)
	return out
}

// newest returns the most recently modified of the node's files matching
// pattern.
func (f *finder) newest(pattern string) string {
	var best string
	var bestT int64
	for _, p := range f.glob(pattern) {
		st, err := os.Stat(f.host(p))
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if t := st.ModTime().UnixNano(); best == "" || t > bestT {
			best, bestT = p, t
		}
	}
	return best
}

// credentials records the CA, certificate and key and which are missing.
func (f *finder) credentials(e *result.FoundEtcd, ca, cert, key string) {
	e.CACert, e.Cert, e.Key = ca, cert, key
	for _, p := range []string{ca, cert, key} {
		if p != "" && !f.exists(p) {
			e.Missing = append(e.Missing, p)
		}
	}
}

func (f *finder) add(e result.FoundEtcd) { f.d.Found = append(f.d.Found, e) }

// noSettings records a file that exists but sets nothing for etcd.
func (f *finder) noSettings(file string) { f.d.NoSettings = append(f.d.NoSettings, file) }

// readYAML returns the node's YAML file p, or nil when it does not exist,
// cannot be read, or holds no document (only comments or blank lines),
// which it records as a file with no settings.
func (f *finder) readYAML(p string) []byte {
	b := f.read(p)
	if b != nil && blankYAML(b) {
		f.noSettings(p)
		return nil
	}
	return b
}

// blankYAML reports whether a YAML file holds no document: only comments,
// blank lines and document markers.
func blankYAML(b []byte) bool {
	var v any
	return yaml.Unmarshal(b, &v) == nil && v == nil
}

// kubeadm reads the static pod manifest kubeadm writes.
func (f *finder) kubeadm() {
	f.d.Looked = append(f.d.Looked, kubeadmManifest)
	b := f.readYAML(kubeadmManifest)
	if b == nil {
		return
	}
	pod, c, err := parsePod(b)
	if err != nil {
		f.problem(kubeadmManifest, err)
		return
	}
	cfg := podConfig(pod, c)
	e := cfg.found("kubeadm", kubeadmManifest)
	// kubeadm's own client certificates: the health check's (what
	// etcdctl in the etcd pod uses), else kube-apiserver's.
	cert, key := "/etc/kubernetes/pki/etcd/healthcheck-client.crt", "/etc/kubernetes/pki/etcd/healthcheck-client.key"
	if !f.exists(cert) && f.exists("/etc/kubernetes/pki/apiserver-etcd-client.crt") {
		cert, key = "/etc/kubernetes/pki/apiserver-etcd-client.crt", "/etc/kubernetes/pki/apiserver-etcd-client.key"
	}
	ca := cfg.hostPath(cfg.get("trusted-ca-file"))
	if ca == "" {
		ca = "/etc/kubernetes/pki/etcd/ca.crt"
	}
	f.credentials(&e, ca, cert, key)
	e.Log = f.podLog(pod)
	f.add(e)
}

// rancher reads the etcd config file k3s or RKE2 writes for the etcd it
// runs (k3s in its own process, RKE2 as a static pod).
func (f *finder) rancher(dist string) {
	base := "/var/lib/rancher/" + dist + "/server"
	file := base + "/db/etcd/config"
	f.d.Looked = append(f.d.Looked, file)
	b := f.readYAML(file)
	if b == nil {
		return
	}
	cfg, err := parseConfigYAML(b)
	if err != nil {
		f.problem(file, err)
		return
	}
	e := cfg.found(dist, file)
	// The client certificate k3s and RKE2 make for etcd's clients
	// (etcd-snapshot uses it), else the server's own, which is also a
	// client certificate.
	tls := base + "/tls/etcd/"
	cert, key := tls+"client.crt", tls+"client.key"
	if !f.exists(cert) && f.exists(tls+"server-client.crt") {
		cert, key = tls+"server-client.crt", tls+"server-client.key"
	}
	ca := cfg.get("trusted-ca-file")
	if ca == "" {
		ca = tls + "server-ca.crt"
	}
	f.credentials(&e, ca, cert, key)
	if dist == "k3s" {
		e.Log, e.Unit = "journalctl -u k3s (etcd logs in k3s' own log)", "k3s"
	} else {
		e.Log = f.newest("/var/log/pods/kube-system_etcd-*_*/etcd/*.log")
		if e.Log == "" {
			e.Log = "kubectl -n kube-system logs etcd-NODE"
		}
	}
	f.add(e)
}

// openshift reads the etcd static pod of OpenShift 4 (the
// cluster-etcd-operator's): the installed manifest, else the newest
// revision under static-pod-resources.
func (f *finder) openshift() {
	f.d.Looked = append(f.d.Looked, openshiftManifest, openshiftRevisions)
	file := openshiftManifest
	b := f.read(file)
	if b != nil && blankYAML(b) {
		// The installed manifest is what kubelet runs: one that holds
		// nothing runs no etcd, whatever the older revisions say.
		f.noSettings(file)
		return
	}
	if b == nil {
		file = ""
		best := -1
		for _, p := range f.glob(openshiftRevisions) {
			dir := path.Base(path.Dir(p))
			n, err := strconv.Atoi(strings.TrimPrefix(dir, "etcd-pod-"))
			if err == nil && n > best {
				best, file = n, p
			}
		}
		if file == "" {
			return
		}
		if b = f.readYAML(file); b == nil {
			return
		}
	}
	pod, c, err := parsePod(b)
	if err != nil {
		f.problem(file, err)
		return
	}
	cfg := podConfig(pod, c)
	e := cfg.found("openshift", file)
	if e.DataDir == "" {
		e.DataDir = "/var/lib/etcd"
	}
	// etcdctl in the etcd pod connects with the node's peer certificate;
	// etcd-all-certs holds every node's: take this node's.
	certs := openshiftCerts + "/secrets/etcd-all-certs/"
	node := cfg.env["NODE_NAME"]
	if node == "" {
		node = f.hostname()
	}
	if e.Name == "" {
		// OpenShift names each member after its node.
		e.Name = node
	}
	var cert, key string
	if node != "" && f.exists(certs+"etcd-peer-"+node+".crt") {
		cert, key = certs+"etcd-peer-"+node+".crt", certs+"etcd-peer-"+node+".key"
	} else if m := f.glob(certs + "etcd-peer-*.crt"); len(m) == 1 {
		cert, key = m[0], strings.TrimSuffix(m[0], ".crt")+".key"
	} else if len(m) > 1 {
		e.Notes = append(e.Notes, fmt.Sprintf("%d peer certificates in %s and none named after this node (%q): pass --cert and --key", len(m), certs, node))
	} else {
		cert, key = certs+"etcd-peer-NODE.crt", certs+"etcd-peer-NODE.key"
	}
	ca := cfg.hostPath(cfg.get("trusted-ca-file"))
	if ca == "" || strings.Contains(ca, "$") {
		ca = openshiftCerts + "/configmaps/etcd-serving-ca/ca-bundle.crt"
	}
	f.credentials(&e, ca, cert, key)
	e.Log = f.podLog(pod)
	f.add(e)
}

// hostname is the node's name from /etc/hostname under the root.
func (f *finder) hostname() string {
	b, err := os.ReadFile(f.host("/etc/hostname"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// systemd reads the environment files of an etcd systemd unit and etcd's
// YAML config file. An environment file without an ETCD_ variable (every
// line a comment, as Debian's etcd-server installs /etc/default/etcd)
// configures no etcd: it is no find.
func (f *finder) systemd() {
	for _, file := range systemdEnvFiles {
		f.d.Looked = append(f.d.Looked, file)
		b := f.read(file)
		if b == nil {
			continue
		}
		env := parseEnvFile(b)
		cfg := config{flags: map[string]string{}}
		for k, v := range env {
			if name, ok := strings.CutPrefix(k, "ETCD_"); ok && name != "" {
				cfg.flags[strings.ToLower(strings.ReplaceAll(name, "_", "-"))] = v
			}
		}
		if len(cfg.flags) == 0 {
			f.noSettings(file)
			continue
		}
		f.addSystemd(cfg, file)
	}
	f.d.Looked = append(f.d.Looked, etcdConfYAML)
	if b := f.readYAML(etcdConfYAML); b != nil {
		cfg, err := parseConfigYAML(b)
		if err != nil {
			f.problem(etcdConfYAML, err)
			return
		}
		f.addSystemd(cfg, etcdConfYAML)
	}
}

func (f *finder) addSystemd(cfg config, file string) {
	e := cfg.found("systemd", file)
	f.credentials(&e, cfg.get("trusted-ca-file"), cfg.get("cert-file"), cfg.get("key-file"))
	if e.Cert != "" {
		e.Notes = append(e.Notes, "cert and key are the server's own (etcd's --cert-file), which clients can use when it allows client authentication")
	}
	e.Log, e.Unit = "journalctl -u etcd", "etcd"
	f.add(e)
}

// podLog returns the newest log file kubelet keeps for the static pod's
// etcd container: /var/log/pods/<namespace>_<pod>-<node>_<uid>/etcd/.
func (f *finder) podLog(pod *corev1.Pod) string {
	ns := pod.Namespace
	if ns == "" {
		ns = "kube-system"
	}
	name := pod.Name
	if name == "" {
		name = "etcd"
	}
	if l := f.newest(fmt.Sprintf("/var/log/pods/%s_%s-*_*/etcd/*.log", ns, name)); l != "" {
		return l
	}
	return fmt.Sprintf("kubectl -n %s logs %s-NODE -c etcd (no log under /var/log/pods)", ns, name)
}

// TunableFlags are the flags of etcd whose values a node's configuration
// is read for (FoundEtcd.Flags).
var TunableFlags = []string{"heartbeat-interval", "election-timeout", "quota-backend-bytes", "auto-compaction-mode", "auto-compaction-retention", "snapshot-count"}

// config is one etcd's settings by flag name (data-dir, cert-file...).
type config struct {
	flags map[string]string
	env   map[string]string
	// mounts maps a container's paths to the node's (longest first).
	mounts [][2]string
}

// get returns the flag's value, else the ETCD_ variable of the same name.
func (c config) get(name string) string {
	if v, ok := c.flags[name]; ok {
		return c.expand(v)
	}
	return c.expand(c.env["ETCD_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))])
}

// expand replaces $(VAR) and ${VAR} with the container's literal env.
func (c config) expand(v string) string {
	for k, val := range c.env {
		v = strings.ReplaceAll(v, "${"+k+"}", val)
		v = strings.ReplaceAll(v, "$("+k+")", val)
	}
	return v
}

// hostPath maps a path in the container to the node's through the pod's
// hostPath volumes.
func (c config) hostPath(p string) string {
	if p == "" {
		return ""
	}
	for _, m := range c.mounts {
		if p == m[0] {
			return m[1]
		}
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(m[0], "/")+"/"); ok {
			return path.Join(m[1], rest)
		}
	}
	return p
}

func (c config) found(source, file string) result.FoundEtcd {
	e := result.FoundEtcd{Source: source, File: file, Name: c.get("name"), DataDir: c.hostPath(c.get("data-dir"))}
	e.ListenClientURLs = splitURLs(c.get("listen-client-urls"))
	e.AdvertiseClientURLs = splitURLs(c.get("advertise-client-urls"))
	if len(e.ListenClientURLs) == 0 {
		e.ListenClientURLs = []string{defaultClientURL}
		e.Notes = append(e.Notes, "no listen-client-urls: etcd's default "+defaultClientURL)
	}
	e.Endpoints = endpoints(e.ListenClientURLs)
	for _, name := range TunableFlags {
		if v := c.get(name); v != "" {
			if e.Flags == nil {
				e.Flags = map[string]string{}
			}
			e.Flags[name] = v
		}
	}
	if m := endpoints(splitURLs(c.get("listen-metrics-urls"))); len(m) > 0 {
		e.MetricsURL = strings.TrimSuffix(m[0], "/") + "/metrics"
	}
	return e
}

func splitURLs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// endpoints turns listen URLs into URLs a client on the node dials: an
// unspecified address (0.0.0.0, ::) becomes 127.0.0.1; loopback first.
func endpoints(listen []string) []string {
	var loop, other []string
	seen := map[string]bool{}
	for _, l := range listen {
		u, err := url.Parse(l)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		host, port := u.Hostname(), u.Port()
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		if port != "" {
			u.Host = net.JoinHostPort(host, port)
		} else {
			u.Host = host
		}
		s := u.String()
		if seen[s] {
			continue
		}
		seen[s] = true
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			loop = append(loop, s)
		} else {
			other = append(other, s)
		}
	}
	sort.SliceStable(loop, func(i, j int) bool {
		return strings.Contains(loop[i], "127.0.0.1") && !strings.Contains(loop[j], "127.0.0.1")
	})
	return append(loop, other...)
}

// parsePod parses a static pod manifest and returns its etcd container.
func parsePod(b []byte) (*corev1.Pod, *corev1.Container, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(b, &pod); err != nil {
		return nil, nil, fmt.Errorf("not a pod manifest: %w", err)
	}
	if pod.Kind != "" && pod.Kind != "Pod" {
		return nil, nil, fmt.Errorf("kind %q, not a Pod", pod.Kind)
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == "etcd" {
			return &pod, &pod.Spec.Containers[i], nil
		}
	}
	return nil, nil, errors.New("no container named etcd in the pod")
}

// podConfig reads etcd's flags from the container's command and args (a
// shell script's too, as OpenShift's), its literal env, and the pod's
// hostPath mounts.
func podConfig(pod *corev1.Pod, c *corev1.Container) config {
	cfg := config{flags: map[string]string{}, env: map[string]string{}}
	var words []string
	for _, s := range append(append([]string{}, c.Command...), c.Args...) {
		for _, w := range strings.Fields(s) {
			if w != `\` {
				words = append(words, strings.Trim(w, `"'`))
			}
		}
	}
	for i, w := range words {
		name, ok := strings.CutPrefix(w, "--")
		if !ok || name == "" {
			continue
		}
		if k, v, ok := strings.Cut(name, "="); ok {
			cfg.flags[k] = strings.Trim(v, `"'`)
		} else if i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			cfg.flags[name] = words[i+1]
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			cfg.env[e.Name] = e.Value
		}
	}
	vols := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			vols[v.Name] = v.HostPath.Path
		}
	}
	for _, m := range c.VolumeMounts {
		if hp, ok := vols[m.Name]; ok {
			cfg.mounts = append(cfg.mounts, [2]string{path.Clean(m.MountPath), path.Join(hp, m.SubPath)})
		}
	}
	sort.Slice(cfg.mounts, func(i, j int) bool { return len(cfg.mounts[i][0]) > len(cfg.mounts[j][0]) })
	return cfg
}

// etcdConfigFile is the part of etcd's YAML config file (--config-file)
// that discovery reads; k3s and RKE2 write the same keys.
type etcdConfigFile struct {
	Name                string `json:"name"`
	DataDir             string `json:"data-dir"`
	ListenClientURLs    string `json:"listen-client-urls"`
	AdvertiseClientURLs string `json:"advertise-client-urls"`
	ListenMetricsURLs   string `json:"listen-metrics-urls"`
	ClientTLS           struct {
		CertFile      string `json:"cert-file"`
		KeyFile       string `json:"key-file"`
		TrustedCAFile string `json:"trusted-ca-file"`
	} `json:"client-transport-security"`
}

func parseConfigYAML(b []byte) (config, error) {
	var c etcdConfigFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		return config{}, fmt.Errorf("not an etcd config file: %w", err)
	}
	cfg := config{flags: map[string]string{}}
	for k, v := range map[string]string{
		"name": c.Name, "data-dir": c.DataDir, "listen-client-urls": c.ListenClientURLs,
		"advertise-client-urls": c.AdvertiseClientURLs, "listen-metrics-urls": c.ListenMetricsURLs,
		"cert-file": c.ClientTLS.CertFile, "key-file": c.ClientTLS.KeyFile, "trusted-ca-file": c.ClientTLS.TrustedCAFile,
	} {
		if v != "" {
			cfg.flags[k] = v
		}
	}
	if len(cfg.flags) == 0 {
		return config{}, errors.New("not an etcd config file: none of data-dir, listen-client-urls, name in it")
	}
	// The tunable flags, whatever their YAML type (numbers, strings).
	var all map[string]any
	if j, err := yaml.YAMLToJSON(b); err == nil && decodeNumbers(j, &all) == nil {
		for _, name := range TunableFlags {
			if v, ok := all[name]; ok && v != nil {
				cfg.flags[name] = fmt.Sprint(v)
			}
		}
	}
	return cfg, nil
}

// decodeNumbers decodes JSON into v, its numbers as written (a quota of
// 8589934592 stays that, not 8.589934592e+09).
func decodeNumbers(j []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	return d.Decode(v)
}

// parseEnvFile reads KEY=VALUE lines (systemd's EnvironmentFile, shell
// style with optional export and quotes).
func parseEnvFile(b []byte) map[string]string {
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		l = strings.TrimPrefix(l, "export ")
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env[strings.TrimSpace(k)] = v
	}
	return env
}

// unwrapPath drops the *fs.PathError's path (the caller names the file as
// on the node, without the root).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
