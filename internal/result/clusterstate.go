package result

// ClusterState is the cluster's own state as its members tell it on call
// (etcd's Status, AlarmList, HashKV and a few reads of one key): who is a
// member of which cluster, whom each sees as leader, how far each is
// behind, whether their key-value stores agree, and which alarms are
// raised. Nothing is written to read it.
type ClusterState struct {
	// ClusterID is the cluster most endpoints answered for, hexadecimal.
	ClusterID string `json:"cluster_id,omitempty"`
	// Rounds is how many times every member was asked for its status,
	// Interval seconds apart.
	Rounds   int             `json:"rounds"`
	Interval float64         `json:"interval"`
	Members  []ClusterMember `json:"members"`
	// Alarms are the alarms the cluster has raised (AlarmList); AlarmsError
	// says why they could not be read.
	Alarms      []ClusterAlarm `json:"alarms,omitempty"`
	AlarmsError string         `json:"alarms_error,omitempty"`
	// HashRevision is the revision at which every member's key-value
	// store was hashed (HashKV), and CompactRevision the compaction the
	// hashes start from; 0 when no hash was compared.
	HashRevision    int64 `json:"hash_revision,omitempty"`
	CompactRevision int64 `json:"compact_revision,omitempty"`
	// HashAttempts is how many times the hashes were asked for (a
	// compaction between two members' answers asks again).
	HashAttempts int      `json:"hash_attempts,omitempty"`
	Notes        []string `json:"notes,omitempty"`
}

// ClusterMember is one member (or one endpoint given that is not a listed
// member) as it answered.
type ClusterMember struct {
	// Name is the member's name in the member list ("" for an endpoint
	// that is not a member of the cluster listed); Endpoint is where it
	// was asked.
	Name     string `json:"name,omitempty"`
	Endpoint string `json:"endpoint"`
	// ID and ClusterID are hexadecimal, as etcdctl prints them.
	ID        string `json:"id,omitempty"`
	ClusterID string `json:"cluster_id,omitempty"`
	// Listed says the member list of the cluster named it; Given that it
	// was one of the endpoints given.
	Listed bool `json:"listed"`
	Given  bool `json:"given,omitempty"`
	// Version is the server's version, StorageVersion its data's (etcd
	// 3.6 and later).
	Version        string `json:"version,omitempty"`
	StorageVersion string `json:"storage_version,omitempty"`
	Learner        bool   `json:"learner,omitempty"`
	// Leader is the ID of the leader it saw in the last round it
	// answered.
	Leader string `json:"leader,omitempty"`
	// Term, RaftIndex (its committed index), AppliedIndex, Revision, DBSize
	// and DBSizeInUse are of the last round it answered.
	Term         uint64 `json:"term,omitempty"`
	RaftIndex    uint64 `json:"raft_index,omitempty"`
	AppliedIndex uint64 `json:"applied_index,omitempty"`
	Revision     int64  `json:"revision,omitempty"`
	DBSize       int64  `json:"db_size,omitempty"`
	DBSizeInUse  int64  `json:"db_size_in_use,omitempty"`
	// DBSizeQuota is its backend quota (etcd 3.6 and later).
	DBSizeQuota int64 `json:"db_size_quota,omitempty"`
	// Errors are the errors the member itself reports (Status's errors,
	// e.g. an alarm).
	Errors []string `json:"errors,omitempty"`
	// StatusRounds is each round's answer.
	StatusRounds []StatusRound `json:"status_rounds"`
	// Serializable and Linearizable are the times of its reads of one key:
	// served from its own store, and after the leader confirmed it is
	// current (ReadIndex).
	Serializable *ReadTimes `json:"serializable,omitempty"`
	Linearizable *ReadTimes `json:"linearizable,omitempty"`
	// Hash is its HashKV at the state's HashRevision; HashError says why
	// there is none.
	Hash      uint32 `json:"hash,omitempty"`
	HashError string `json:"hash_error,omitempty"`
	Hashed    bool   `json:"hashed,omitempty"`
	// Unreachable says why it never answered; Requests counts the
	// requests sent to it.
	Unreachable string `json:"unreachable,omitempty"`
	Requests    int    `json:"requests"`
}

// Answered says whether the member answered a status round.
func (m ClusterMember) Answered() bool {
	for _, r := range m.StatusRounds {
		if r.Error == "" {
			return true
		}
	}
	return false
}

// StatusRound is one member's answer to one round of Status.
type StatusRound struct {
	// T is when the member answered (or failed to), in seconds from the
	// first round's start: a member slow to answer is compared with the
	// leader at that time, not at the round's start.
	T            float64 `json:"t"`
	Leader       string  `json:"leader,omitempty"`
	Term         uint64  `json:"term,omitempty"`
	RaftIndex    uint64  `json:"raft_index,omitempty"`
	AppliedIndex uint64  `json:"applied_index,omitempty"`
	Revision     int64   `json:"revision,omitempty"`
	Error        string  `json:"error,omitempty"`
}

// ReadTimes are the times of a few reads, in seconds.
type ReadTimes struct {
	Count  int     `json:"count"`
	Errors int     `json:"errors,omitempty"`
	Min    float64 `json:"min,omitempty"`
	Median float64 `json:"median,omitempty"`
	Max    float64 `json:"max,omitempty"`
	// Error is the first failure's.
	Error string `json:"error,omitempty"`
}

// ClusterAlarm is one alarm raised on a member.
type ClusterAlarm struct {
	MemberID string `json:"member_id"`
	Member   string `json:"member,omitempty"`
	// Alarm is etcd's name of it: NOSPACE, CORRUPT.
	Alarm string `json:"alarm"`
}
