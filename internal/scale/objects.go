package scale

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

// A value starts with the magic kube-apiserver puts before its protobuf
// objects ("k8s\x00"), then the time of the put (Unix nanoseconds, big
// endian), from which a watcher measures the event's lag; random bytes
// fill the rest.
var magic = [4]byte{'k', '8', 's', 0}

const headerLen = 12 // len(magic) + 8

// Objects names and makes the objects of one run: keys, values and their
// sizes are pure functions of the kind and the object's number, so that an
// update rewrites the same key with a value of the same size.
type Objects struct {
	prefix     string
	counts     []Count
	namespaces int64
	state      uint64
	pool       []byte // random filler, shared read-only
}

// poolSize is the filler's length; values take a window of it.
const poolSize = 2 * MaxValueSize

// NewObjects returns the objects of a run under prefix (which ends in /).
func NewObjects(prefix string, counts []Count, namespaces int, state uint64) *Objects {
	o := &Objects{prefix: prefix, counts: counts, namespaces: int64(max(namespaces, 1)), state: state}
	rng := rand.New(rand.NewPCG(state, 0x5ca1e))
	o.pool = make([]byte, poolSize)
	for i := 0; i < len(o.pool); i += 8 {
		binary.LittleEndian.PutUint64(o.pool[i:], rng.Uint64())
	}
	return o
}

// Counts returns the kinds and their target counts.
func (o *Objects) Counts() []Count { return o.counts }

// KindPrefix is where kind k's objects live: <prefix>registry/<resource>/.
func (o *Objects) KindPrefix(k int) string {
	return o.prefix + "registry/" + o.counts[k].Kind.Resource + "/"
}

// replicas is how many pods a deployment of the generated names has.
const replicas = 5

// Key appends the key of object idx of kind k to dst.
func (o *Objects) Key(dst []byte, k int, idx int64) []byte {
	kind := o.counts[k].Kind
	dst = append(dst, o.prefix...)
	dst = append(dst, "registry/"...)
	dst = append(dst, kind.Resource...)
	dst = append(dst, '/')
	app := idx // the application (deployment) the object belongs to
	if kind.Name == "pods" || kind.Name == "events" {
		app = idx / replicas
	}
	if kind.Namespaced {
		dst = append(dst, "ns-"...)
		dst = pad(dst, app%o.namespaces, 3)
		dst = append(dst, '/')
	}
	switch kind.Name {
	case "pods":
		dst = podName(dst, idx)
	case "events":
		// An event is named after the object it is about and a hex time.
		dst = podName(dst, idx)
		dst = append(dst, '.')
		dst = hex16(dst, mix(uint64(idx)^o.state))
	case "nodes":
		dst = append(dst, "node-"...)
		dst = pad(dst, idx, 5)
	case "configmaps":
		dst = appName(dst, app)
		dst = append(dst, "-config"...)
	case "secrets":
		dst = appName(dst, app)
		dst = append(dst, "-token-"...)
		dst = suffix(dst, idx)
	default:
		dst = appName(dst, app)
	}
	return dst
}

// podName writes a ReplicaSet pod's name: <app>-<template hash>-<suffix>.
func podName(dst []byte, idx int64) []byte {
	app := idx / replicas
	dst = appName(dst, app)
	dst = append(dst, '-')
	h := mix(uint64(app) + 0x9e3779b97f4a7c15)
	for range 10 {
		dst = append(dst, alphabet[h%uint64(len(alphabet))])
		h /= uint64(len(alphabet))
	}
	dst = append(dst, '-')
	return suffix(dst, idx)
}

func appName(dst []byte, app int64) []byte {
	dst = append(dst, "app-"...)
	return pad(dst, app, 5)
}

// alphabet is the one of Kubernetes' generated name suffixes
// (k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable digits).
const alphabet = "bcdfghjklmnpqrstvwxz2456789"

// suffixSpace is 27^5, the number of five-letter suffixes.
const suffixSpace = 14348907

// suffixMul is prime to suffixSpace (3^15): multiplying by it modulo
// suffixSpace is a bijection.
const suffixMul = 2654435761

// suffix writes five letters that are unique for idx < suffixSpace: an
// affine bijection of idx modulo suffixSpace, written in base 27.
func suffix(dst []byte, idx int64) []byte {
	v := (uint64(idx)*suffixMul + 12345) % suffixSpace
	for range 5 {
		dst = append(dst, alphabet[v%27])
		v /= 27
	}
	return dst
}

func pad(dst []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

func hex16(dst []byte, v uint64) []byte {
	const hex = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		dst = append(dst, hex[(v>>uint(i))&15])
	}
	return dst
}

// mix is splitmix64's finaliser: a bijection of uint64 that scatters
// neighbouring numbers.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unit turns 53 bits of x into a number in [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// Size is the value size of object idx of kind k.
func (o *Objects) Size(k int, idx int64) int {
	h := mix(o.state ^ uint64(k)<<56 ^ uint64(idx))
	return o.counts[k].Kind.Size.Size(unit(h), unit(mix(h)))
}

// Value appends the value of object idx of kind k, put at time now, to dst.
func (o *Objects) Value(dst []byte, k int, idx int64, now time.Time) []byte {
	n := o.Size(k, idx)
	dst = append(dst, magic[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(now.UnixNano()))
	off := int(mix(uint64(idx)^o.state) % uint64(len(o.pool)-n))
	return append(dst, o.pool[off:off+n-headerLen]...)
}

// Put makes req the put of object idx of kind k, sent now, with lease (0:
// none); it reuses req's buffers.
func (o *Objects) Put(req *pb.PutRequest, k int, idx int64, lease int64) {
	req.Key = o.Key(req.Key[:0], k, idx)
	req.Value = o.Value(req.Value[:0], k, idx, time.Now())
	req.Lease = lease
}

// PutTime reads the time of the put from a value that etcdperf scale
// wrote; false for any other value.
func PutTime(v []byte) (time.Time, bool) {
	if len(v) < headerLen || [4]byte(v[:4]) != magic {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v[4:headerLen]))), true
}
