package etcdlog

import "bytes"

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
	return key[:keyPrefixLen([]byte(key), rangeEnd != "")]
}

// keyPrefixLen returns the length of KeyPrefix's prefix of key; isRange
// tells whether the request gave a range end.
func keyPrefixLen(key []byte, isRange bool) int {
	want := 2
	const reg = "/registry/"
	if hasPrefix(key, reg) {
		if i := bytes.IndexByte(key[len(reg):], '/'); i >= 0 && bytes.IndexByte(key[len(reg):len(reg)+i], '.') >= 0 {
			want = 3
		}
	}
	start := 0
	if len(key) > 0 && key[0] == '/' {
		start = 1
	}
	n := len(key)
	seen, last := 0, -1
	for i := start; i < len(key); i++ {
		if key[i] == '/' {
			seen++
			last = i
			if seen == want {
				n = i + 1
				break
			}
		}
	}
	if seen < want && !isRange && last > 0 {
		n = last + 1
	}
	return min(n, maxPrefix)
}
