package scale

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kind is one kind of Kubernetes object: where kube-apiserver stores it
// (/registry/<resource>/<namespace>/<name>, k8s.io/apiserver's etcd3
// storage under the default --etcd-prefix) and how large its values are.
type Kind struct {
	// Name is the kind as --objects names it (kubectl's plural).
	Name string
	// Resource is the path after registry/: services are stored under
	// services/specs, nodes under minions.
	Resource string
	// Namespaced objects have a namespace in their key.
	Namespaced bool
	// Size is the default distribution of the values' sizes.
	Size Dist
	// Leased objects are written with a lease, as kube-apiserver writes
	// events (--event-ttl): they expire by themselves.
	Leased bool
}

// Kinds are the objects etcdperf scale writes. The sizes approximate what
// kube-apiserver stores (protobuf): a pod with a couple of containers is a
// few KiB and grows with containers, env and managedFields; a service or
// an event under 1 KiB; a node carries its images list. --value-size
// overrides them.
var Kinds = []Kind{
	{Name: "pods", Resource: "pods", Namespaced: true, Size: Dist{Shape: LogNormal, A: 3 << 10, B: 0.5}},
	{Name: "services", Resource: "services/specs", Namespaced: true, Size: Dist{Shape: LogNormal, A: 1 << 10, B: 0.3}},
	{Name: "events", Resource: "events", Namespaced: true, Size: Dist{Shape: LogNormal, A: 768, B: 0.3}, Leased: true},
	{Name: "configmaps", Resource: "configmaps", Namespaced: true, Size: Dist{Shape: LogNormal, A: 2 << 10, B: 1}},
	{Name: "secrets", Resource: "secrets", Namespaced: true, Size: Dist{Shape: LogNormal, A: 1 << 10, B: 0.8}},
	{Name: "nodes", Resource: "minions", Size: Dist{Shape: LogNormal, A: 12 << 10, B: 0.4}},
}

// KindByName returns the kind called name.
func KindByName(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// KindNames lists the kinds' names.
func KindNames() []string {
	var out []string
	for _, k := range Kinds {
		out = append(out, k.Name)
	}
	return out
}

// DefaultObjects is --objects' default: pods and services of a large
// cluster (the scale of OpenStack performance-docs' etcd health tests), and
// events that expire.
const DefaultObjects = "pods=100000,services=10000,events=10000"

// MaxObjects bounds the objects of one kind: ten million is far beyond
// any Kubernetes cluster (150,000 pods is the documented limit), and the
// names stay unique up to it.
const MaxObjects = 10_000_000

// Count is how many objects of a kind a run grows to.
type Count struct {
	Kind Kind
	N    int64
}

// ParseObjects reads --objects: kind=count pairs separated by commas, e.g.
// "pods=100000,services=10000". Counts take k and m for thousands and
// millions ("100k"). Each kind may appear once; order is kept.
func ParseObjects(s string) ([]Count, error) {
	pairs, err := ParsePairs(s, func(name string) error {
		if _, ok := KindByName(name); !ok {
			return fmt.Errorf("--objects: unknown kind %q (one of %s)", name, strings.Join(KindNames(), ", "))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Count
	for _, p := range pairs {
		k, _ := KindByName(p.Name)
		out = append(out, Count{Kind: k, N: p.N})
	}
	return out, nil
}

// Pair is one name=count of --objects.
type Pair struct {
	Name string
	N    int64
}

// ParsePairs reads --objects' name=count pairs (names lower-cased, counts
// as ParseCount reads them, each name once, order kept); known says why a
// name is refused, nil when it is known.
func ParsePairs(s string, known func(name string) error) ([]Pair, error) {
	var out []Pair
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, num, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("--objects %q: want kind=count, e.g. pods=100000", part)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if err := known(name); err != nil {
			return nil, err
		}
		n, err := ParseCount(num)
		if err != nil {
			return nil, fmt.Errorf("--objects %s: %w", part, err)
		}
		if slices.ContainsFunc(out, func(p Pair) bool { return p.Name == name }) {
			return nil, fmt.Errorf("--objects: %s given twice", name)
		}
		out = append(out, Pair{Name: name, N: n})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--objects names no object: want e.g. pods=100000,services=10000")
	}
	return out, nil
}

// ParseCount reads a positive count: 5000, 100k, 1.5m.
func ParseCount(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		mult, t = 1e6, strings.TrimSuffix(t, "m")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a count", s)
	}
	v *= mult
	if v != math.Trunc(v) || v < 1 {
		return 0, fmt.Errorf("the count must be a whole number of at least 1, got %q", s)
	}
	if v > MaxObjects {
		return 0, fmt.Errorf("%q is over the %d objects one kind may have", s, int64(MaxObjects))
	}
	return int64(v), nil
}

// ApplySizes sets the value sizes of --value-size: "DIST" for every kind,
// "KIND=DIST" for one (given later, it wins over an earlier DIST).
func ApplySizes(counts []Count, specs []string) error {
	for _, spec := range specs {
		name, dist, hasKind := strings.Cut(spec, "=")
		if !hasKind {
			dist = spec
		}
		d, err := ParseDist(dist)
		if err != nil {
			return fmt.Errorf("--value-size: %w", err)
		}
		if !hasKind {
			for i := range counts {
				counts[i].Kind.Size = d
			}
			continue
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if _, ok := KindByName(name); !ok {
			return fmt.Errorf("--value-size %q: unknown kind %q (one of %s)", spec, name, strings.Join(KindNames(), ", "))
		}
		found := false
		for i := range counts {
			if counts[i].Kind.Name == name {
				counts[i].Kind.Size, found = d, true
			}
		}
		if !found {
			return fmt.Errorf("--value-size %q: --objects has no %s", spec, name)
		}
	}
	return nil
}
