package result

import "time"

// Logs is what etcd's own logs say: the outcome of `etcdperf logs`.
//
// Every etcd log line the parser recognised counts in Lines; lines it could
// not read as an etcd log line (another program's output, truncated or
// binary garbage) count in Unparsed. Classified lines are events: Classes
// maps each class id (e.g. "slow_apply", see docs/logs.md for the list) to
// its count, Stats gives per class the first and last time and the
// distribution of the duration the line reported, and Timeline counts
// events per class per time bucket.
type Logs struct {
	// Sources are the files or streams that were read, in order.
	Sources []LogSource `json:"sources"`
	// Lines is the number of non-empty lines read; Unparsed those that were
	// not etcd log lines. Bytes is the size of the text read (decompressed).
	Lines    int64 `json:"lines"`
	Unparsed int64 `json:"unparsed"`
	// OutsideWindow counts the etcd log lines left out by --since and
	// --until.
	OutsideWindow int64 `json:"outside_window,omitempty"`
	Bytes         int64 `json:"bytes"`
	// Formats counts the parsed lines per log format: "capnslog" (etcd
	// 3.1-3.4 text), "zap-json", "zap-console", "bare" (a message without
	// etcd's own header, e.g. journald's capnslog formatter).
	Formats map[string]int64 `json:"formats,omitempty"`
	// First and Last are the earliest and latest timestamps seen.
	First *time.Time `json:"first,omitempty"`
	Last  *time.Time `json:"last,omitempty"`
	// Classes maps each class id to its number of events; classes with no
	// event are absent.
	Classes map[string]int64 `json:"classes"`
	// Stats holds one entry per class that occurred, in the order of the
	// class table.
	Stats []LogClassStats `json:"stats,omitempty"`
	// Members holds one entry per member (a log source, a journald host or
	// a kubectl/compose prefix), sorted by name.
	Members []LogMember `json:"members,omitempty"`
	// Timeline counts events per class per time bucket.
	Timeline *LogTimeline `json:"timeline,omitempty"`
	// TopRequests are the slowest requests named in the logs (slow apply,
	// read-only range/txn and request warnings), slowest first.
	TopRequests []LogRequest `json:"top_requests,omitempty"`
	// TopPrefixes are the key prefixes of the requests in those warnings,
	// most frequent first.
	TopPrefixes []LogKeyPrefix `json:"top_prefixes,omitempty"`
	// Events are the classified lines in the order read, up to the limit
	// the run was given; EventsOmitted counts those beyond it.
	Events        []LogEvent `json:"events,omitempty"`
	EventsOmitted int64      `json:"events_omitted,omitempty"`
	// Compactions and Defrags are each member's scheduled compactions and
	// defragmentations, with the latency spikes near the compactions.
	Compactions []Compactions `json:"compactions,omitempty"`
	Defrags     []Defrags     `json:"defrags,omitempty"`
}

// LogSource is one input of `etcdperf logs`.
type LogSource struct {
	// Name is the path as given or found ("-" for standard input).
	Name string `json:"name"`
	// Member is the member its lines are attributed to when they carry no
	// host or prefix of their own.
	Member     string `json:"member"`
	Compressed bool   `json:"compressed,omitempty"`
	Lines      int64  `json:"lines"`
	Unparsed   int64  `json:"unparsed"`
	Bytes      int64  `json:"bytes"`
	// Skipped says why a file found in a directory was not read (it did not
	// look like an etcd log).
	Skipped string `json:"skipped,omitempty"`
}

// LogClassStats describes the events of one class.
type LogClassStats struct {
	Class string     `json:"class"`
	Title string     `json:"title"`
	Count int64      `json:"count"`
	First *time.Time `json:"first,omitempty"`
	Last  *time.Time `json:"last,omitempty"`
	// Members maps each member to its count of this class.
	Members map[string]int64 `json:"members,omitempty"`
	// Took is the distribution of the duration the lines reported (how long
	// the apply, fdatasync, request took, how late the heartbeat was, the
	// clock drift), when they report one.
	Took *Latency `json:"took,omitempty"`
	// Expected is the limit etcd compared with (e.g. 100ms for apply, 1s
	// for fdatasync), when the lines say it; the largest one seen.
	Expected float64 `json:"expected,omitempty"`
}

// LogMember is what the logs of one member say.
type LogMember struct {
	Name string `json:"name"`
	// ID is the etcd member id (hex) when the logs name it; EtcdName the
	// member's --name; Version the etcd version it logged at start.
	ID       string `json:"id,omitempty"`
	EtcdName string `json:"etcd_name,omitempty"`
	Version  string `json:"version,omitempty"`
	// HeartbeatInterval and ElectionTimeout are its --heartbeat-interval
	// and --election-timeout in seconds (0: not in the logs), from its
	// last startup lines (TimersAtStart), else the heartbeat interval a
	// late heartbeat's line names.
	HeartbeatInterval float64          `json:"heartbeat_interval,omitempty"`
	ElectionTimeout   float64          `json:"election_timeout,omitempty"`
	TimersAtStart     bool             `json:"timers_at_start,omitempty"`
	Lines             int64            `json:"lines"`
	Classes           map[string]int64 `json:"classes,omitempty"`
	First             *time.Time       `json:"first,omitempty"`
	Last              *time.Time       `json:"last,omitempty"`
	// MaxLeaderChanges15m is the largest number of leader changes (elected,
	// changed or lost) this member saw within any 15 minutes.
	MaxLeaderChanges15m int `json:"max_leader_changes_15m,omitempty"`
}

// LogTimeline counts events per class per time bucket, for charts.
//
// Bucket i covers [Start + i*Bucket, Start + (i+1)*Bucket) seconds; every
// series has exactly Buckets counts. Series with an empty Member count all
// members together (one per class that occurred); when there are several
// members, per-member series follow. Bucket is the width asked for, doubled
// as often as needed to keep Buckets at or below the limit of the run
// (10000 by default) over long logs.
type LogTimeline struct {
	Start   time.Time           `json:"start"`
	Bucket  float64             `json:"bucket"`
	Buckets int                 `json:"buckets"`
	Series  []LogTimelineSeries `json:"series"`
}

// LogTimelineSeries is the count of one class (and member) per bucket.
type LogTimelineSeries struct {
	Class  string  `json:"class"`
	Member string  `json:"member,omitempty"`
	Counts []int64 `json:"counts"`
}

// LogRequest is one slow request named in the logs.
type LogRequest struct {
	Time   *time.Time `json:"time,omitempty"`
	Member string     `json:"member"`
	Class  string     `json:"class"`
	// Took is how long it took, in seconds.
	Took float64 `json:"took"`
	// Key is the first key the request names, Prefix its key prefix (the
	// first two path segments, or the prefix of a prefix range).
	Key    string `json:"key,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	// Request is the request as etcd printed it (shortened when long);
	// Response what it said about the result.
	Request  string `json:"request,omitempty"`
	Response string `json:"response,omitempty"`
	// Count and Size are the response's key count and size in bytes, when
	// the line says them.
	Count int64 `json:"count,omitempty"`
	Size  int64 `json:"size,omitempty"`
}

// LogKeyPrefix is how often the requests in slow-request warnings touched
// one key prefix.
type LogKeyPrefix struct {
	Prefix string `json:"prefix"`
	Count  int64  `json:"count"`
	// Took is the sum and Max the largest duration of those requests, in
	// seconds; MaxCount the most keys one of them returned.
	Took     float64 `json:"took"`
	Max      float64 `json:"max"`
	MaxCount int64   `json:"max_count,omitempty"`
	// Approximate is set when more distinct prefixes occurred than the run
	// tracks: the counts are then upper bounds (space-saving algorithm).
	Approximate bool `json:"approximate,omitempty"`
}

// LogEvent is one classified log line.
type LogEvent struct {
	Time   *time.Time `json:"time,omitempty"`
	Member string     `json:"member"`
	Class  string     `json:"class"`
	Level  string     `json:"level,omitempty"`
	// Took and Expected are in seconds, when the line reports them.
	Took     float64 `json:"took,omitempty"`
	Expected float64 `json:"expected,omitempty"`
	Key      string  `json:"key,omitempty"`
	Prefix   string  `json:"prefix,omitempty"`
	Count    int64   `json:"count,omitempty"`
	Size     int64   `json:"size,omitempty"`
	// Peer is the other member involved (heartbeat target, unhealthy peer),
	// Leader the leader named by an election line, Term its raft term.
	Peer    string `json:"peer,omitempty"`
	Leader  string `json:"leader,omitempty"`
	Term    uint64 `json:"term,omitempty"`
	Remote  string `json:"remote,omitempty"`
	Message string `json:"message"`
	// Source is the file and line number it came from.
	Source string `json:"source,omitempty"`
}

// Class returns the statistics of the class id, nil when none of its lines
// was seen.
func (l *Logs) Class(id string) *LogClassStats {
	for i := range l.Stats {
		if l.Stats[i].Class == id {
			return &l.Stats[i]
		}
	}
	return nil
}
