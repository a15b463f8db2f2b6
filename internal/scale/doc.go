// Package scale grows a Kubernetes-shaped key space in etcd directly, step
// by step, as kube-apiserver stores it (/registry/<resource>/..., values of
// the kinds' sizes, events on leases), with a control plane's background
// traffic of updates, lists and watches, and measures each step: the
// requests' latency, etcd's database size and its own figures. Whether a
// step stops the run is the judge's (StopFunc, passed in); package
// kubescale does the same through a real API server.
package scale
