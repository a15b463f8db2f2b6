// Package profile holds etcdctl's load models: check perf's (s, m, l, xl:
// clients, puts/s, key and value sizes) and check datascale's (keys to
// write), by etcdctl's names, and the clients check perf would use at
// any rate (ClientsFor).
package profile
