package load

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

// The workloads, named as in etcd's benchmark tool.
const (
	Put            = "put"
	Range          = "range"
	TxnPut         = "txn-put"
	TxnMixed       = "txn-mixed"
	WatchLatency   = "watch-latency"
	LeaseKeepalive = "lease-keepalive"
)

// Workloads lists the workload names.
var Workloads = []string{Put, Range, TxnPut, TxnMixed, WatchLatency, LeaseKeepalive}

// Options configure one load run. The zero values of the workload fields
// are not defaults: the command sets etcd benchmark's defaults.
type Options struct {
	Workload string
	// Clients are concurrent workers, spread over the connections.
	Clients int
	// Total requests (puts for watch-latency); 0 with Duration.
	Total int64
	// Duration bounds the run when Total is 0 (and caps it otherwise).
	Duration time.Duration
	// Rate is the intended requests per second over all clients (puts per
	// second for watch-latency); 0 sends as fast as the clients can.
	Rate float64
	// CommandTimeout bounds one request; a slower one is counted as an
	// error (DeadlineExceeded). 0 means no bound.
	CommandTimeout time.Duration
	// StallTimeout ends the run with a *StallError when no request has
	// succeeded for this long while some failed: etcd stopped answering,
	// and going on would only count timeouts. 0 never ends it.
	StallTimeout time.Duration

	// Prefix holds every key the run writes; range and txn-mixed read it.
	Prefix string
	// KeySize is the size of the key after the prefix, ValSize the value's.
	KeySize, ValSize int
	// KeySpaceSize is how many distinct keys are written (etcd's
	// --key-space-size; 1 writes one key over and over).
	KeySpaceSize int
	// SequentialKeys writes keys 0, 1, 2... modulo the key space instead
	// of random ones.
	SequentialKeys bool
	// Objects, when set, makes the put workload write what it sets in req
	// for request number i (key, value, lease) instead of KeySize and
	// ValSize keys over the key space; every key must be under Prefix.
	// Workers call it concurrently, each with a request of its own that it
	// may reuse the buffers of.
	Objects func(i int64, req *pb.PutRequest)

	// Range: Key and RangeEnd (empty: the prefix); Serializable is
	// --consistency s; Limit, KeysOnly, CountOnly as in etcd's range.
	RangeKey, RangeEnd string
	Serializable       bool
	Limit              int64
	KeysOnly           bool
	CountOnly          bool
	// Prefill writes this many keys under the prefix before a range run.
	Prefill int

	// TxnOps is the number of puts per txn-put transaction.
	TxnOps int
	// RWRatio is txn-mixed's reads per write.
	RWRatio float64

	// Streams and WatchersPerStream shape watch-latency; PrevKV asks for
	// the previous value in events.
	Streams, WatchersPerStream int
	PrevKV                     bool

	// LeaseTTL is the TTL of lease-keepalive's leases, in seconds.
	LeaseTTL int64

	// Stop, when closed, ends the run gracefully: no request is sent after
	// it, and the ones in flight complete and count (ending ctx instead
	// cancels them). Nil never stops.
	Stop <-chan struct{}

	// ClientOnly sends every request through etcd's client instead of the
	// lean HTTP/2 path (for comparisons).
	ClientOnly bool

	// RandomState makes the random keys reproducible: the same value
	// gives the same keys; 0 picks one.
	RandomState uint64

	// Progress, when not nil, counts requests as they complete.
	Progress *Progress
	// SampleInterval is the length of one sample of the series (default 1s).
	SampleInterval time.Duration
}

// Validate checks o before anything connects.
func (o *Options) Validate() error {
	known := false
	for _, w := range Workloads {
		known = known || w == o.Workload
	}
	if !known {
		return fmt.Errorf("unknown workload %q (one of %s)", o.Workload, strings.Join(Workloads, ", "))
	}
	switch {
	case o.Clients < 1:
		return fmt.Errorf("--clients must be at least 1, got %d", o.Clients)
	case o.Total < 0:
		return fmt.Errorf("--total cannot be negative")
	case o.Total == 0 && o.Duration <= 0:
		return errors.New("give --total or --duration")
	case o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0):
		return fmt.Errorf("--rate must be a positive number of requests per second")
	case o.Prefix == "":
		return errors.New("an empty --prefix would write over the whole key space")
	}
	switch o.Workload {
	case Put, TxnPut, TxnMixed:
		if o.Workload == Put && o.Objects != nil {
			break
		}
		if err := o.validateKeys(); err != nil {
			return err
		}
	case Range:
		if o.Limit < 0 {
			return fmt.Errorf("--limit cannot be negative")
		}
		if o.Prefill > 0 {
			if need := hexDigits(uint64(o.Prefill - 1)); need > o.KeySize {
				return fmt.Errorf("--key-size %d cannot hold %d distinct keys: use --key-size %d or more", o.KeySize, o.Prefill, need)
			}
		}
	case WatchLatency:
		if o.Streams < 1 || o.WatchersPerStream < 1 {
			return fmt.Errorf("--streams and --watchers-per-stream must be at least 1")
		}
		if o.KeySize < 1 {
			return fmt.Errorf("--key-size must be at least 1")
		}
		if o.ValSize < 8 {
			return fmt.Errorf("--val-size must be at least 8 for watch-latency (the value carries the put's number)")
		}
		if o.Rate == 0 {
			return errors.New("watch-latency needs a --put-rate")
		}
	case LeaseKeepalive:
		if o.LeaseTTL < 1 {
			o.LeaseTTL = 60
		}
	}
	if o.Workload == TxnPut && (o.TxnOps < 1 || o.TxnOps > o.KeySpaceSize) {
		return fmt.Errorf("--txn-ops must be between 1 and --key-space-size (%d), got %d", o.KeySpaceSize, o.TxnOps)
	}
	if o.Workload == TxnMixed && (o.RWRatio < 0 || math.IsNaN(o.RWRatio) || math.IsInf(o.RWRatio, 0)) {
		return fmt.Errorf("--rw-ratio must be a number >= 0")
	}
	return nil
}

func (o *Options) validateKeys() error {
	if o.KeySize < 1 {
		return fmt.Errorf("--key-size must be at least 1, got %d", o.KeySize)
	}
	if o.ValSize < 0 {
		return fmt.Errorf("--val-size cannot be negative")
	}
	if o.KeySpaceSize < 1 {
		return fmt.Errorf("--key-space-size must be at least 1, got %d", o.KeySpaceSize)
	}
	if need := hexDigits(uint64(o.KeySpaceSize - 1)); need > o.KeySize {
		return fmt.Errorf("--key-size %d cannot hold %d distinct keys (keys are hexadecimal numbers after the prefix): use --key-size %d or more", o.KeySize, o.KeySpaceSize, need)
	}
	if o.ValSize > 64<<20 {
		return fmt.Errorf("--val-size %d is larger than etcd accepts", o.ValSize)
	}
	return nil
}

// hexDigits is how many hexadecimal digits n needs.
func hexDigits(n uint64) int {
	d := 1
	for n >= 16 {
		n >>= 4
		d++
	}
	return d
}

// putKey writes key number n as KeySize lowercase hexadecimal digits after
// the prefix into dst, which has len(prefix)+KeySize bytes.
func putKey(dst []byte, prefixLen int, n uint64) {
	const hex = "0123456789abcdef"
	for i := len(dst) - 1; i >= prefixLen; i-- {
		dst[i] = hex[n&15]
		n >>= 4
	}
}

// KeyName returns key number n as the run writes it, for messages and
// tests.
func KeyName(prefix string, keySize int, n uint64) string {
	b := make([]byte, len(prefix)+keySize)
	copy(b, prefix)
	putKey(b, len(prefix), n)
	return string(b)
}

// PrefixEnd returns the range end that covers every key with prefix p.
func PrefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}

// Describe says in a few words what the options make etcd do.
func (o *Options) Describe() string {
	switch o.Workload {
	case Put:
		if o.Objects != nil {
			return "puts of the caller's objects under " + o.Prefix
		}
		return fmt.Sprintf("puts of %d-byte keys and %d-byte values, %s", o.KeySize, o.ValSize, keySpaceWords(o.KeySpaceSize, o.SequentialKeys))
	case Range:
		what := "the run's prefix"
		if o.RangeKey != "" {
			what = strconv.Quote(o.RangeKey)
			if o.RangeEnd != "" {
				what += " to " + strconv.Quote(o.RangeEnd)
			}
		}
		return fmt.Sprintf("%s ranges over %s%s", consistencyWord(o.Serializable), what, rangeFlags(o))
	case TxnPut:
		return fmt.Sprintf("transactions of %d puts of %d-byte keys and %d-byte values, %s", o.TxnOps, o.KeySize, o.ValSize, keySpaceWords(o.KeySpaceSize, false))
	case TxnMixed:
		return fmt.Sprintf("transactions mixing %s ranges and puts at %g reads per write, key space %d", consistencyWord(o.Serializable), o.RWRatio, o.KeySpaceSize)
	case WatchLatency:
		return fmt.Sprintf("put-to-event latency: %d streams x %d watchers on one key, puts of %d-byte values", o.Streams, o.WatchersPerStream, o.ValSize)
	case LeaseKeepalive:
		return fmt.Sprintf("lease keep-alives, one lease (TTL %ds) and one keep-alive stream per client", o.LeaseTTL)
	}
	return o.Workload
}

// keySpaceWords says which keys the puts write: one key over and over, a
// new random key each time (a key space of every int64), or keys over a
// key space of n.
func keySpaceWords(n int, sequential bool) string {
	switch {
	case n == 1:
		return "all to the same key"
	case n == math.MaxInt && !sequential:
		return "a new random key each time"
	}
	return fmt.Sprintf("%s keys over a key space of %d", seqWord(sequential), n)
}

func seqWord(seq bool) string {
	if seq {
		return "sequential"
	}
	return "random"
}

func consistencyWord(serializable bool) string {
	if serializable {
		return "serializable"
	}
	return "linearizable"
}

func rangeFlags(o *Options) string {
	var f []string
	if o.Limit > 0 {
		f = append(f, fmt.Sprintf("limit %d", o.Limit))
	}
	if o.KeysOnly {
		f = append(f, "keys only")
	}
	if o.CountOnly {
		f = append(f, "count only")
	}
	if len(f) == 0 {
		return ""
	}
	return " (" + strings.Join(f, ", ") + ")"
}
