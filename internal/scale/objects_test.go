package scale

import (
	"regexp"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

func objectsFor(t *testing.T, spec string) *Objects {
	t.Helper()
	cs, err := ParseObjects(spec)
	if err != nil {
		t.Fatal(err)
	}
	return NewObjects("/etcdperf/run/", cs, 100, 42)
}

// Keys follow kube-apiserver's layout, names look like the API server's
// generated ones, and every object has a key of its own.
func TestKeysLayoutAndUniqueness(t *testing.T) {
	o := objectsFor(t, "pods=20000,services=2000,events=5000,configmaps=100,secrets=100,nodes=100")
	layouts := map[string]*regexp.Regexp{
		"pods":       regexp.MustCompile(`^/etcdperf/run/registry/pods/ns-\d{3}/app-\d{5}-[bcdfghjklmnpqrstvwxz2456789]{10}-[bcdfghjklmnpqrstvwxz2456789]{5}$`),
		"services":   regexp.MustCompile(`^/etcdperf/run/registry/services/specs/ns-\d{3}/app-\d{5}$`),
		"events":     regexp.MustCompile(`^/etcdperf/run/registry/events/ns-\d{3}/app-\d{5}-\w{10}-\w{5}\.[0-9a-f]{16}$`),
		"configmaps": regexp.MustCompile(`^/etcdperf/run/registry/configmaps/ns-\d{3}/app-\d{5}-config$`),
		"secrets":    regexp.MustCompile(`^/etcdperf/run/registry/secrets/ns-\d{3}/app-\d{5}-token-\w{5}$`),
		"nodes":      regexp.MustCompile(`^/etcdperf/run/registry/minions/node-\d{5}$`),
	}
	seen := map[string]bool{}
	var buf []byte
	for k, c := range o.Counts() {
		re := layouts[c.Kind.Name]
		for idx := range c.N {
			buf = o.Key(buf[:0], k, idx)
			key := string(buf)
			if !re.MatchString(key) {
				t.Fatalf("%s %d: key %q", c.Kind.Name, idx, key)
			}
			if !strings.HasPrefix(key, o.KindPrefix(k)) {
				t.Fatalf("%q is not under %q", key, o.KindPrefix(k))
			}
			if seen[key] {
				t.Fatalf("%s %d: key %q given twice", c.Kind.Name, idx, key)
			}
			seen[key] = true
		}
	}
	// A deployment's pods share a namespace and a template hash.
	a, b := string(o.Key(nil, 0, 10)), string(o.Key(nil, 0, 14))
	if a[:strings.LastIndexByte(a, '-')] != b[:strings.LastIndexByte(b, '-')] {
		t.Errorf("pods 10 and 14 of one deployment: %q %q", a, b)
	}
}

// The suffixes stay unique up to the largest count a kind may have: the
// map is a bijection when its multiplier is prime to the suffix space
// (checked), and distinct numbers give distinct suffixes (sampled).
func TestSuffixIsABijection(t *testing.T) {
	if MaxObjects > suffixSpace || gcd(suffixMul, suffixSpace) != 1 || suffixSpace != 27*27*27*27*27 {
		t.Fatalf("MaxObjects %d, %d suffixes, multiplier %d", MaxObjects, suffixSpace, suffixMul)
	}
	seen := make([]bool, suffixSpace)
	for i := range int64(300000) {
		idx := i
		if i%2 == 1 {
			idx = MaxObjects - i
		}
		s := suffix(nil, idx)
		var v int
		for i := len(s) - 1; i >= 0; i-- {
			v = v*27 + strings.IndexByte(alphabet, s[i])
		}
		if seen[v] {
			t.Fatalf("suffix %q of %d repeats", s, idx)
		}
		seen[v] = true
	}
}

func TestValues(t *testing.T) {
	o := objectsFor(t, "pods=1000,services=1000")
	now := time.Unix(1700000000, 123456789)
	var sum [2]float64
	for k := range 2 {
		for idx := range int64(1000) {
			v := o.Value(nil, k, idx, now)
			if len(v) != o.Size(k, idx) {
				t.Fatalf("kind %d object %d: %d bytes, size %d", k, idx, len(v), o.Size(k, idx))
			}
			if at, ok := PutTime(v); !ok || !at.Equal(now) {
				t.Fatalf("put time %v %v", at, ok)
			}
			sum[k] += float64(len(v))
		}
	}
	// Pods are a few KiB, services smaller.
	if sum[0]/1000 < 2500 || sum[0]/1000 > 5000 || sum[1]/1000 > 1500 || sum[1] >= sum[0] {
		t.Errorf("mean sizes: pods %.0f, services %.0f", sum[0]/1000, sum[1]/1000)
	}
	// The same random state makes the same objects; another one other sizes.
	again := NewObjects("/etcdperf/run/", o.Counts(), 100, 42)
	for idx := range int64(100) {
		if again.Size(0, idx) != o.Size(0, idx) || string(again.Value(nil, 0, idx, now)) != string(o.Value(nil, 0, idx, now)) {
			t.Fatalf("object %d differs under the same random state", idx)
		}
	}
	other := NewObjects("/p/", o.Counts(), 100, 43)
	same := 0
	for idx := range int64(100) {
		if other.Size(0, idx) == o.Size(0, idx) {
			same++
		}
	}
	if same > 10 {
		t.Errorf("%d of 100 sizes equal under another random state", same)
	}
	// Put fills a request with the same key and value, now, and the lease.
	req := &pb.PutRequest{Key: []byte("old key"), Value: make([]byte, 10), Lease: 9}
	before := time.Now()
	o.Put(req, 1, 5, 77)
	at, ok := PutTime(req.Value)
	if string(req.Key) != string(o.Key(nil, 1, 5)) || len(req.Value) != o.Size(1, 5) || req.Lease != 77 || !ok || at.Before(before) || time.Since(at) > time.Second {
		t.Errorf("put %q, %d bytes at %v, lease %d", req.Key, len(req.Value), at, req.Lease)
	}
	for _, v := range [][]byte{nil, []byte("k8s\x00short"), []byte("xyz\x00012345678901234")} {
		if _, ok := PutTime(v); ok {
			t.Errorf("PutTime(%q) ok", v)
		}
	}
}

// A step's batch writes every object of the step once, kinds mixed; the
// steps together write every object once.
func TestBatchCoversEveryObjectOnce(t *testing.T) {
	cs, _ := ParseObjects("pods=1003,services=101,events=7")
	const steps = 7
	seen := map[[2]int64]bool{}
	for s := 1; s <= steps; s++ {
		b := NewBatch(cs, steps, s)
		kindsInFirstTen := map[int]bool{}
		for i := range b.Len() {
			k, idx := b.At(i)
			from, to := StepRange(cs[k].N, steps, s)
			if idx < from || idx >= to {
				t.Fatalf("step %d request %d: %s %d outside [%d, %d)", s, i, cs[k].Kind.Name, idx, from, to)
			}
			key := [2]int64{int64(k), idx}
			if seen[key] {
				t.Fatalf("step %d: %s %d written twice", s, cs[k].Kind.Name, idx)
			}
			seen[key] = true
			if i < 10 {
				kindsInFirstTen[k] = true
			}
		}
		if len(kindsInFirstTen) < 2 {
			t.Errorf("step %d: the first ten requests write one kind", s)
		}
	}
	if len(seen) != 1003+101+7 {
		t.Errorf("%d objects written, want %d", len(seen), 1003+101+7)
	}
	for _, n := range []int64{1, 2, 3, 10, 1 << 20} {
		if m := coprimeNear(n); gcd(m, uint64(n)) != 1 {
			t.Errorf("coprimeNear(%d) = %d", n, m)
		}
	}
}

// Updates pick objects written by the earlier steps, never leased ones.
func TestUpdatesPickExistingObjects(t *testing.T) {
	cs, _ := ParseObjects("pods=100,events=100,services=10")
	if u := NewUpdates(cs, 5, 1, 1); u.Len() != 0 {
		t.Errorf("step 1 may update %d objects", u.Len())
	}
	u := NewUpdates(cs, 5, 3, 1)
	if u.Len() != 40+4 {
		t.Fatalf("step 3 may update %d objects, want 44", u.Len())
	}
	hit := map[[2]int64]bool{}
	for i := range int64(2000) {
		k, idx := u.At(i)
		if cs[k].Kind.Leased {
			t.Fatal("an update of an event")
		}
		_, written := StepRange(cs[k].N, 5, 2)
		if idx < 0 || idx >= written {
			t.Fatalf("update of %s %d, only %d written", cs[k].Kind.Name, idx, written)
		}
		hit[[2]int64{int64(k), idx}] = true
	}
	if len(hit) != 44 {
		t.Errorf("2000 updates touched %d of 44 objects", len(hit))
	}
}
