package dbfile

import (
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
)

// DefaultKubePrefixes are where Kubernetes' API servers keep their objects:
// kube-apiserver's default --etcd-prefix, and OpenShift's prefixes of its
// Kubernetes and OpenShift API servers.
var DefaultKubePrefixes = []string{"/registry/", "/kubernetes.io/", "/openshift.io/"}

// builtinGroups are the API groups whose resources kube-apiserver stores
// under their group (the aggregator's and apiextensions' own), unlike the
// other built-in groups, stored under the resource alone.
var builtinGroups = map[string]bool{"apiregistration.k8s.io": true, "apiextensions.k8s.io": true}

// Place is where a key belongs: its resource (or group of other keys) and
// its namespace ("" when cluster-scoped or not a Kubernetes key).
type Place struct {
	// Resource names the resource: "pods", "services/specs",
	// "cert-manager.io/certificates"; for other keys their first segment.
	Resource string
	// Prefix is the resource's key prefix ("/registry/pods/").
	Prefix    string
	Namespace string
	// Class is one of result.DBClass*.
	Class string
}

// Classify places a key by kube-apiserver's layout under one of
// prefixes (each ending in /):
//
//	<prefix><resource>/<namespace>/<name>          namespaced
//	<prefix><resource>/<name>                      cluster-scoped
//	<prefix>services/specs/<namespace>/<name>      (and services/endpoints)
//	<prefix><group>/<plural>/[<namespace>/]<name>  custom resources, CRDs
//	                                               (apiextensions.k8s.io) and
//	                                               APIServices (apiregistration.k8s.io)
//
// A group has a dot in its name, which no built-in resource has. Other
// keys are grouped by their first path segment ("/myapp/...": "/myapp");
// keys of one segment are "(top level)".
func Classify(key []byte, prefixes []string) Place {
	return classify(string(key), prefixes)
}

// classify is Classify on a key held as a string: the Place's strings are
// parts of it (no copy for each of a database's keys).
func classify(key string, prefixes []string) Place {
	for _, p := range prefixes {
		if !strings.HasPrefix(key, p) || len(key) == len(p) {
			continue
		}
		body := key[len(p):]
		first, rest, _ := strings.Cut(body, "/")
		second, after, two := strings.Cut(rest, "/")
		// res is the resource, rest what follows it ("<namespace>/<name>"
		// or "<name>").
		res := first
		class := result.DBClassKubernetes
		switch {
		case strings.Contains(first, ".") && two:
			res, rest = body[:len(first)+1+len(second)], after
			switch {
			case first == "apiextensions.k8s.io" && second == "customresourcedefinitions":
				class = result.DBClassCRD
			case !builtinGroups[first]:
				class = result.DBClassCustom
			}
		case first == "services" && two && (second == "specs" || second == "endpoints"):
			res, rest = body[:len(first)+1+len(second)], after
		}
		pl := Place{Resource: res, Prefix: key[:len(p)+len(res)] + "/", Class: class}
		if len(key) > len(p)+len(res) {
			pl.Prefix = key[:len(p)+len(res)+1]
		}
		if ns, _, found := strings.Cut(rest, "/"); found {
			pl.Namespace = ns
		}
		return pl
	}
	lead := strings.HasPrefix(key, "/")
	body := strings.TrimPrefix(key, "/")
	seg, _, found := strings.Cut(body, "/")
	if !found {
		return Place{Resource: "(top level)", Class: result.DBClassOther}
	}
	n := len(seg)
	if lead {
		n++
	}
	return Place{Resource: key[:n], Prefix: key[:n+1], Class: result.DBClassOther}
}

// NormalizePrefixes returns prefixes each ending in one /, without
// duplicates; an empty prefix is refused by the caller.
func NormalizePrefixes(ps []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range ps {
		p = strings.TrimRight(strings.TrimSpace(p), "/") + "/"
		if p == "/" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}
