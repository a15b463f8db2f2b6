package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
)

func init() { RegisterText("discover", discoverText) }

var sourceNames = map[string]string{
	"kubeadm":   "kubeadm's static pod",
	"k3s":       "k3s' etcd config",
	"rke2":      "RKE2's etcd config",
	"openshift": "OpenShift's etcd static pod",
	"systemd":   "etcd's systemd configuration",
}

// discoverText is `etcdperf discover`: one block per etcd found, with a
// command line to connect with and whether nothing listens there, then
// the files that could not be used or set nothing for etcd.
func discoverText(w io.Writer, r *result.Result) error {
	d := r.Discover
	if d == nil {
		return nil
	}
	if d.Root != "/" {
		fmt.Fprintf(w, "Node files under %s (paths below are as on the node)\n", d.Root)
	}
	for i, f := range d.Found {
		if i > 0 || d.Root != "/" {
			fmt.Fprintln(w)
		}
		src := sourceNames[f.Source]
		if src == "" {
			src = f.Source
		}
		fmt.Fprintf(w, "etcd from %s: %s\n", src, f.File)
		line := func(k, v string) {
			if v != "" {
				fmt.Fprintf(w, "  %-10s %s\n", k+":", v)
			}
		}
		line("name", f.Name)
		line("data dir", f.DataDir)
		line("endpoints", strings.Join(f.Endpoints, ", "))
		if !sameStrings(f.AdvertiseClientURLs, f.Endpoints) {
			line("advertise", strings.Join(f.AdvertiseClientURLs, ", "))
		}
		line("metrics", f.MetricsURL)
		line("cacert", f.CACert)
		line("cert", f.Cert)
		line("key", f.Key)
		if len(f.Missing) > 0 {
			line("missing", strings.Join(f.Missing, ", "))
		}
		line("log", f.Log)
		var flags []string
		for _, k := range slices.Sorted(maps.Keys(f.Flags)) {
			flags = append(flags, "--"+k+"="+f.Flags[k])
		}
		line("flags", strings.Join(flags, " "))
		for _, n := range f.Notes {
			line("note", n)
		}
		if len(f.Endpoints) > 0 {
			fmt.Fprintf(w, "  connect:   --endpoints %s", f.Endpoints[0])
			for _, fl := range [][2]string{{"cacert", f.CACert}, {"cert", f.Cert}, {"key", f.Key}} {
				if fl[1] != "" {
					fmt.Fprintf(w, " --%s %s", fl[0], fl[1])
				}
			}
			fmt.Fprintln(w)
		}
		if nr := f.NotRunning(); nr != "" {
			fmt.Fprintf(w, "  %s\n", nr)
		}
	}
	if len(d.Problems) > 0 || len(d.NoSettings) > 0 {
		fmt.Fprintln(w)
		for _, p := range d.Problems {
			fmt.Fprintf(w, "could not use %s: %s\n", p.File, p.Error)
		}
		for _, p := range d.NoSettings {
			fmt.Fprintf(w, "%s: read, no etcd settings\n", p)
		}
	}
	fmt.Fprintf(w, "\nLooked at: %s\n", strings.Join(d.Looked, ", "))
	return nil
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
