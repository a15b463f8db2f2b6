package etcdlog

import "strings"

// maxPrefix bounds the length of a key prefix.
const maxPrefix = 128

// KeyPrefix returns the key prefix a request touches, to count requests by
// the kind of data they read or write. The key is cut after its first two
// path segments ("/registry/pods/default/web-0" and the list prefix
// "/registry/pods/" both give "/registry/pods/"), or three for Kubernetes'
// custom resources, whose second segment is an API group with a dot
// ("/registry/crd.projectcalico.org/ippools/"). A shorter key is kept
// whole when it starts a range (rangeEnd set: "/registry/leases" counted
// by Kubernetes) and cut after its last "/" otherwise
// ("locks/6783699117b39cdd" gives "locks/").
func KeyPrefix(key, rangeEnd string) string {
	want := 2
	const reg = "/registry/"
	if strings.HasPrefix(key, reg) {
		if i := strings.IndexByte(key[len(reg):], '/'); i >= 0 && strings.Contains(key[len(reg):len(reg)+i], ".") {
			want = 3
		}
	}
	start := 0
	if strings.HasPrefix(key, "/") {
		start = 1
	}
	p := key
	seen, last := 0, -1
	for i := start; i < len(key); i++ {
		if key[i] == '/' {
			seen++
			last = i
			if seen == want {
				p = key[:i+1]
				break
			}
		}
	}
	if seen < want && rangeEnd == "" && last > 0 {
		p = key[:last+1]
	}
	if len(p) > maxPrefix {
		p = p[:maxPrefix]
	}
	return p
}
