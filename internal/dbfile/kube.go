package dbfile

import (
	"bytes"
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
	for _, p := range prefixes {
		if !bytes.HasPrefix(key, []byte(p)) || len(key) == len(p) {
			continue
		}
		segs := strings.Split(string(key[len(p):]), "/")
		res, rest := segs[0], segs[1:]
		class := result.DBClassKubernetes
		switch {
		case strings.Contains(res, ".") && len(segs) >= 3:
			res, rest = segs[0]+"/"+segs[1], segs[2:]
			switch {
			case segs[0] == "apiextensions.k8s.io" && segs[1] == "customresourcedefinitions":
				class = result.DBClassCRD
			case !builtinGroups[segs[0]]:
				class = result.DBClassCustom
			}
		case res == "services" && len(segs) >= 3 && (segs[1] == "specs" || segs[1] == "endpoints"):
			res, rest = segs[0]+"/"+segs[1], segs[2:]
		}
		pl := Place{Resource: res, Prefix: p + res + "/", Class: class}
		if len(rest) >= 2 {
			pl.Namespace = rest[0]
		}
		return pl
	}
	s := string(key)
	lead := strings.HasPrefix(s, "/")
	body := strings.TrimPrefix(s, "/")
	seg, _, found := strings.Cut(body, "/")
	if !found {
		return Place{Resource: "(top level)", Class: result.DBClassOther}
	}
	if lead {
		seg = "/" + seg
	}
	return Place{Resource: seg, Prefix: seg + "/", Class: result.DBClassOther}
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
