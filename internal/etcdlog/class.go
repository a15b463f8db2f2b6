package etcdlog

// Class is the kind of event a log line reports.
type Class uint8

// The classes, in the order reports list them. Their ids (Class.ID) are
// stable: scripts and the Result depend on them.
const (
	ClassNone Class = iota
	SlowApply
	SlowReadOnlyRange
	SlowReadOnlyTxn
	SlowRequest
	SlowTrace
	LargeRangeWarning
	HeartbeatLate
	ServerOverloaded
	SlowFdatasync
	TickMissed
	RequestTimeout
	ReadIndexSlow
	LeaderElected
	LeaderChanged
	LeaderLost
	ElectionStarted
	SnapshotSent
	SnapshotFailed
	SnapshotSlow
	PeerUnhealthy
	MessageDropped
	ClockDrift
	DBSpaceExceeded
	Compaction
	CompactionFailed
	Defrag
	DefragFailed
	numClasses
)

// Wording is one way etcd's source has written a class's message, with the
// releases that write it (checked with `git grep` on the release tags of
// github.com/etcd-io/etcd and go.etcd.io/raft/v3) and an example line as
// that release writes it: copied from a public report when one was found
// (testdata/real/SOURCES.md lists them), otherwise formatted from the
// source's format string and fields.
type Wording struct {
	Text     string
	Versions string
	Example  string
}

// ClassInfo describes a class.
type ClassInfo struct {
	ID    string
	Title string
	// Took says what the class's duration means, when its lines report one.
	Took     string
	Wordings []Wording
}

// Classes is the class table, indexed by Class.
var Classes = [numClasses]ClassInfo{
	ClassNone: {ID: "none"},
	SlowApply: {ID: "slow_apply", Title: "applying entries took longer than --warning-apply-duration (100ms)", Took: "apply time",
		Wordings: []Wording{
			{"apply entries took too long [%v for %d entries]", "3.1.0-3.1.17, 3.2.0-3.2.22, 3.3.0 (capnslog)",
				"2017-03-29 15:50:15.586058 W | etcdserver: apply entries took too long [106.743668ms for 1 entries]"},
			{"request %q with result %q took too long (%v) to execute", "3.1.18+, 3.2.23+, 3.3.1-3.4 (capnslog)",
				`2019-03-18 23:04:09.076462 W | etcdserver: request "header:<ID:16682293516599270623 > txn:<compare:<target:CREATE key:\"thorin.uat.trigger/6783699117b39cdd\" create_revision:0 > success:<request_put:<key:\"thorin.uat.trigger/6783699117b39cdd\" value_size:0 lease:7458921479744494813 > > failure:<> >" with result "size:96" took too long (112.999427ms) to execute`},
			{`"apply request took too long" with "prefix":""`, "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2025-06-01T10:00:00.123456Z","caller":"txn/util.go:93","msg":"apply request took too long","took":"121.9ms","expected-duration":"100ms","prefix":"","request":"header:<ID:7587886234712456709 > put:<key:\"/registry/leases/kube-node-lease/node1\" value_size:512 >","response":"size:5"}`},
		}},
	SlowReadOnlyRange: {ID: "slow_read_only_range", Title: "a read-only range request took longer than --warning-apply-duration", Took: "request time",
		Wordings: []Wording{
			{"read-only range request %q with result %q took too long (%v) to execute", "3.1.18+, 3.2.23+, 3.3.1-3.4 (capnslog)",
				`2019-08-11 23:27:04.344948 W | etcdserver: read-only range request "key:\"/registry/services/specs/default/kubernetes\" " with result "range_response_count:1 size:293" took too long (1.530802357s) to execute`},
			{`"apply request took too long" with "prefix":"read-only range "`, "3.4.0-3.7 (zap); 3.4 also uses it for read-only txns",
				`{"level":"warn","ts":"2020-06-30T01:17:40.463Z","caller":"etcdserver/util.go:144","msg":"apply request took too long","took":"2.885457332s","expected-duration":"100ms","prefix":"read-only range ","request":"key:\"/registry/services/specs\" range_end:\"/registry/services/spect\" count_only:true ","response":"range_response_count:0 size:9"}`},
		}},
	SlowReadOnlyTxn: {ID: "slow_read_only_txn", Title: "a read-only transaction took longer than --warning-apply-duration", Took: "request time",
		Wordings: []Wording{
			{`"apply request took too long" with "prefix":"read-only txn "`, "3.5.0-3.7 (zap)",
				`{"level":"warn","ts":"2023-02-01T08:00:00.000001Z","caller":"etcdserver/util.go:170","msg":"apply request took too long","took":"150ms","expected-duration":"100ms","prefix":"read-only txn ","request":"compare:<> success:<request_range:<key:\"/registry/pods/\" range_end:\"/registry/pods0\" > > failure:<>","response":"responses:<range_response_count:3 > size:2300"}`},
		}},
	SlowRequest: {ID: "slow_request", Title: "a gRPC request took longer than --warning-unary-request-duration (300ms)", Took: "request time",
		Wordings: []Wording{
			{`"request stats" at warn level`, "3.5.0-3.7 (zap; at debug level in 3.4 it is not a warning)",
				`{"level":"warn","ts":"2024-04-22T17:18:03.21385+0800","caller":"v3rpc/interceptor.go:197","msg":"request stats","start time":"2024-04-22T17:18:00.213095+0800","time spent":"3.000743014s","remote":"127.0.0.1:39294","response type":"/etcdserverpb.KV/Range","request count":0,"request size":28,"response count":0,"response size":0,"request content":"key:\"/cs/leader\" range_end:\"/cs/leades\" sort_order:ASCEND sort_target:MOD "}`},
		}},
	SlowTrace: {ID: "slow_trace", Title: "a request trace longer than 100ms, with its slow steps", Took: "request time",
		Wordings: []Wording{
			{`"trace[%d] %s" with "duration" and "detail"`, "3.4.0-3.7 (zap, pkg/traceutil)",
				`{"level":"info","ts":"2020-06-30T01:17:40.462Z","caller":"traceutil/trace.go:145","msg":"trace[1103223440] range","detail":"{range_begin:/registry/rolebindings; range_end:/registry/rolebindingt; response_count:0; response_revision:17787174; }","duration":"1.289965514s","start":"2020-06-30T01:17:39.172Z","end":"2020-06-30T01:17:40.462Z","steps":["trace[1103223440] 'agreement among raft nodes before linearized reading'  (duration: 1.289892686s)"]}`},
		}},
	LargeRangeWarning: {ID: "large_range_warning", Title: `"avoid queries with large range/delete range!" after a slow apply`,
		Wordings: []Wording{
			{"avoid queries with large range/delete range!", "3.1.0-3.1.17, 3.2.0-3.2.22, 3.3.0 (capnslog)",
				"2017-03-29 15:50:15.586080 W | etcdserver: avoid queries with large range/delete range!"},
		}},
	HeartbeatLate: {ID: "heartbeat_late", Title: "the leader failed to send a heartbeat on time", Took: "how late",
		Wordings: []Wording{
			{"failed to send out heartbeat on time (deadline exceeded for %v)", "2.3 (capnslog)",
				"2016-05-12 13:48:19.362501 W | etcdserver: failed to send out heartbeat on time (deadline exceeded for 546.767586ms)"},
			{"failed to send out heartbeat on time (exceeded the %v timeout for %v)", "3.0 (%dms), 3.1, 3.2, 3.3.0 (capnslog)",
				"2017-02-10 08:02:47.025304 W | etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 288.915798ms)"},
			{"failed to send out heartbeat on time (exceeded the %v timeout for %v, to %x)", "3.3.1-3.4 (capnslog)",
				"2019-05-02 10:15:31.424816 W | etcdserver: failed to send out heartbeat on time (exceeded the 100ms timeout for 401.80886ms, to 5dbbb8ef1fbd1ef4)"},
			{"leader failed to send out heartbeat on time; took too long, leader is overloaded likely from slow disk", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2022-08-30T09:17:30.387Z","caller":"etcdserver/raft.go:369","msg":"leader failed to send out heartbeat on time; took too long, leader is overloaded likely from slow disk","to":"63b75c3d731594fc","heartbeat-interval":"100ms","expected-duration":"200ms","exceeded-duration":"61.150187ms"}`},
		}},
	ServerOverloaded: {ID: "server_overloaded", Title: `"server is likely overloaded" after a late heartbeat`,
		Wordings: []Wording{
			{"server is likely overloaded", "3.1-3.4 (capnslog)",
				"2017-03-29 19:17:02.669050 W | etcdserver: server is likely overloaded"},
		}},
	SlowFdatasync: {ID: "slow_fdatasync", Title: "a WAL fdatasync took longer than 1s", Took: "fdatasync time",
		Wordings: []Wording{
			{"sync duration of %v, expected less than %v", "3.1-3.4 (capnslog, wal)",
				"2018-12-15 04:37:33.398062 W | wal: sync duration of 4.136231954s, expected less than 1s"},
			{"slow fdatasync", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2022-08-30T09:19:17.672Z","caller":"wal/wal.go:802","msg":"slow fdatasync","took":"1.263337456s","expected-duration":"1s"}`},
		}},
	TickMissed: {ID: "tick_missed", Title: "raft's tick could not fire: the raft loop was blocked",
		Wordings: []Wording{
			{"A tick missed to fire. Node blocks too long!", "3.1-3.3 (raft)",
				"2018-03-02 11:07:11.012322 W | raft: A tick missed to fire. Node blocks too long!"},
			{"%x (leader %v) A tick missed to fire. Node blocks too long!", "3.4 (raft)",
				`{"level":"warn","ts":"2021-03-01T10:00:00.000Z","caller":"raft/node.go:410","msg":"8e9e05c52164694d (leader true) A tick missed to fire. Node blocks too long!"}`},
			{"%x A tick missed to fire. Node blocks too long!", "3.5-3.7 (raft, go.etcd.io/raft/v3)",
				`{"level":"warn","ts":"2024-01-01T10:00:00.000000Z","logger":"raft","caller":"etcdserver/zap_raft.go:85","msg":"8e9e05c52164694d A tick missed to fire. Node blocks too long!"}`},
		}},
	RequestTimeout: {ID: "request_timeout", Title: "a request timed out (etcdserver: request timed out, read index timeout)",
		Wordings: []Wording{
			{"etcdserver: request timed out[, possibly due to previous leader failure|connection lost|leader transfer took too long|waiting for the applied index took too long] (in a message or error field)", "3.1-3.7",
				"2017-03-29 19:17:20.325368 E | etcdserver: publish error: etcdserver: request timed out"},
			{"timed out waiting for read index response[ (local node might have slow network)]", "3.1.0-3.3.0 short; 3.1.20+, 3.2.32+, 3.3.x-3.7 with the note",
				`{"level":"warn","ts":"2022-05-10T04:41:55.246Z","caller":"etcdserver/v3_server.go:1030","msg":"timed out waiting for read index response (local node might have slow network)","timeout":"7s"}`},
		}},
	ReadIndexSlow: {ID: "read_index_slow", Title: "a linearizable read waited over 500ms for the leader's ReadIndex and retried",
		Wordings: []Wording{
			{"waiting for ReadIndex response took too long, retrying", "3.4.?-3.7 (zap; capnslog variant in 3.4 with the ids)",
				`{"level":"warn","ts":"2024-01-10T07:55:33.433522Z","caller":"etcdserver/v3_server.go:897","msg":"waiting for ReadIndex response took too long, retrying","sent-request-id":11249020940439591963,"retry-timeout":"500ms"}`},
		}},
	LeaderElected: {ID: "leader_elected", Title: "this member saw a leader elected (it had none)",
		Wordings: []Wording{
			{"raft.node: %x elected leader %x at term %d", "3.1-3.7 (raft)",
				`{"level":"info","ts":"2024-05-14T20:25:47.051139Z","logger":"raft","caller":"etcdserver/zap_raft.go:77","msg":"raft.node: 91bc3c398fb3c146 elected leader 91bc3c398fb3c146 at term 3"}`},
		}},
	LeaderChanged: {ID: "leader_changed", Title: "this member saw the leader change",
		Wordings: []Wording{
			{"raft.node: %x changed leader from %x to %x at term %d", "3.1-3.7 (raft)",
				"2018-05-01 10:00:00.000000 I | raft: raft.node: 8dd5c61e6c9005d4 changed leader from aaea08a65ef0ea to 8dd5c61e6c9005d4 at term 5"},
		}},
	LeaderLost: {ID: "leader_lost", Title: "this member lost its leader",
		Wordings: []Wording{
			{"raft.node: %x lost leader %x at term %d", "3.1-3.7 (raft)",
				`{"level":"info","ts":"2025-03-01T04:35:01.445572+0530","logger":"raft","caller":"etcdserver/zap_raft.go:77","msg":"raft.node: bf9071f4639c75cc lost leader bf9071f4639c75cc at term 3"}`},
		}},
	ElectionStarted: {ID: "election_started", Title: "this member started an election (it missed the leader's heartbeats)",
		Wordings: []Wording{
			{"%x is starting a new election at term %d", "3.1-3.7 (raft)",
				"2021-01-08 11:38:38.892987 I | raft: 8dd5c61e6c9005d4 is starting a new election at term 4"},
		}},
	SnapshotSent: {ID: "snapshot_sent", Title: "the leader sent a database snapshot to a member",
		Wordings: []Wording{
			{"database snapshot [index: %d, to: %s] sent out successfully", "3.1-3.4 (capnslog)",
				"2017-03-29 19:10:02.013860 I | rafthttp: database snapshot [index: 617915518, to: d0b191dfe9d8dd31] sent out successfully"},
			{"sent database snapshot", "3.4.0-3.7 (zap)",
				`{"level":"info","ts":"2023-01-01T00:00:00.000000Z","caller":"rafthttp/snapshot_sender.go:131","msg":"sent database snapshot","snapshot-index":3300048,"remote-peer-id":"d0b191dfe9d8dd31","bytes":2023424,"size":"2.0 MB"}`},
		}},
	SnapshotFailed: {ID: "snapshot_failed", Title: "sending or saving a database snapshot failed",
		Wordings: []Wording{
			{"database snapshot [index: %d, to: %s] failed to be sent out[ (%v)]", "3.1-3.4 (capnslog)",
				"2017-03-29 19:17:02.013860 W | rafthttp: database snapshot [index: 617915518, to: d0b191dfe9d8dd31] failed to be sent out"},
			{"failed to send database snapshot", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2023-01-01T00:00:00.000000Z","caller":"rafthttp/snapshot_sender.go:102","msg":"failed to send database snapshot","snapshot-index":3300048,"remote-peer-id":"d0b191dfe9d8dd31","bytes":2023424,"size":"2.0 MB","error":"unexpected EOF"}`},
			{"failed to save incoming database snapshot", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2023-01-01T00:00:00.000000Z","caller":"rafthttp/http.go:279","msg":"failed to save incoming database snapshot","local-member-id":"8e9e05c52164694d","remote-snapshot-sender-id":"d0b191dfe9d8dd31","incoming-snapshot-index":3300048,"error":"unexpected EOF"}`},
		}},
	SnapshotSlow: {ID: "snapshot_slow", Title: "sending a database snapshot took over 30s",
		Wordings: []Wording{
			{"snapshotting is taking more than %v seconds to finish transferring %v MB [started at %v]", "3.2-3.4 (capnslog)",
				"2019-01-01 00:00:00.000000 W | etcdserver: snapshotting is taking more than 30.000391564 seconds to finish transferring 1024 MB [started at 2019-01-01 00:00:00 +0000 UTC]"},
			{"snapshotting taking too long to transfer", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2023-01-01T00:00:00.000000Z","caller":"backend/backend.go:377","msg":"snapshotting taking too long to transfer","taking":"30.0004s","bytes":1073741824,"size":"1.1 GB"}`},
		}},
	PeerUnhealthy: {ID: "peer_unhealthy", Title: "a peer could not be reached or its connection broke",
		Wordings: []Wording{
			{"health check for peer %s could not connect: %v[ (prober %q)]", "3.1-3.4 (capnslog)",
				`2021-01-08 11:38:33.185319 W | rafthttp: health check for peer aaea08a65ef0ea could not connect: dial tcp 10.228.86.164:2380: connect: connection refused (prober "ROUND_TRIPPER_RAFT_MESSAGE")`},
			{"prober detected unhealthy status", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2021-06-16T08:40:21.800Z","caller":"rafthttp/probing_status.go:68","msg":"prober detected unhealthy status","round-tripper-name":"ROUND_TRIPPER_SNAPSHOT","remote-peer-id":"8e9e05c52164694d","rtt":"0s","error":"dial tcp 192.168.0.9:2380: connect: no route to host"}`},
			{"lost the TCP streaming connection with peer %s (%s reader|writer)", "3.1-3.4 (capnslog)",
				"2018-01-01 00:00:00.000000 W | rafthttp: lost the TCP streaming connection with peer 4e8d454852097618 (stream MsgApp v2 reader)"},
			{"lost TCP streaming connection with remote peer", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2024-05-14T20:27:09.094119Z","caller":"rafthttp/stream.go:421","msg":"lost TCP streaming connection with remote peer","stream-reader-type":"stream MsgApp v2","local-member-id":"91bc3c398fb3c146","remote-peer-id":"8211f1d0f64f3269","error":"EOF"}`},
			{"peer %s became inactive[ (message send to peer failed)]", "3.1.0-3.3.0 short; 3.1.20+, 3.2.32+, 3.3.x, 3.4 with the note (capnslog)",
				"2018-01-01 00:00:00.000000 I | rafthttp: peer 4e8d454852097618 became inactive (message send to peer failed)"},
			{"peer became inactive (message send to peer failed)", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2024-05-14T20:27:09.095535Z","caller":"rafthttp/peer_status.go:66","msg":"peer became inactive (message send to peer failed)","peer-id":"8211f1d0f64f3269","error":"failed to dial 8211f1d0f64f3269 on stream MsgApp v2 (peer 8211f1d0f64f3269 failed to find local node 91bc3c398fb3c146)"}`},
			{"failed to %s %s on %s (%s) (dial, read, write, post on stream or pipeline)", "3.1-3.4 (capnslog)",
				"Oct 05 04:22:04 core-01 etcd2[666]: failed to dial 420c9b9a89d8b23d on stream Message (dial tcp 192.168.33.13:2380: no route to host)"},
			{"failed to decode raft message (%v) / failed to read raft message (%v)", "3.1-3.4 (capnslog)",
				"2017-03-29 19:17:26.850195 E | rafthttp: failed to decode raft message (rafthttp: error limit exceeded)"},
			{"failed to reach the peerURL(%s) of member %s (%v) / \"failed to reach the peer URL\"", "3.1-3.3 (capnslog); 3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2024-05-14T20:27:11.085646Z","caller":"etcdserver/cluster_util.go:294","msg":"failed to reach the peer URL","address":"http://127.0.0.1:12380/version","remote-member-id":"8211f1d0f64f3269","error":"Get \"http://127.0.0.1:12380/version\": dial tcp 127.0.0.1:12380: connect: connection refused"}`},
		}},
	MessageDropped: {ID: "message_dropped", Title: "raft messages were dropped because a peer's buffer was full (slow or overloaded network)",
		Wordings: []Wording{
			{"dropped internal raft message (to %s since [%s's ]sending|from %s since receiving) buffer is full (bad/overloaded network)", "3.1-3.4 (capnslog)",
				"2018-01-01 00:00:00.000000 W | rafthttp: dropped internal raft message to 4e8d454852097618 since streamMsg's sending buffer is full (bad/overloaded network)"},
			{"dropped [internal ]Raft message since (sending|receiving) buffer is full (overloaded network)", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2020-03-10T00:53:02.463Z","caller":"rafthttp/peer.go:267","msg":"dropped internal Raft message since sending buffer is full (overloaded network)","message-type":"MsgHeartbeat","local-member-id":"8e9e05c52164694d","from":"8e9e05c52164694d","remote-peer-id":"467d02f1279bb468","remote-peer-active": false}`},
		}},
	ClockDrift: {ID: "clock_drift", Title: "a peer's clock differs by more than 1s", Took: "clock difference",
		Wordings: []Wording{
			{"the clock difference against peer %s is too high [%v > %v][ (prober %q)]", "3.1-3.4 (capnslog)",
				`2019-04-15 08:43:34.873327 W | rafthttp: the clock difference against peer 25b94689aa475203 is too high [1.071059639s > 1s] (prober "ROUND_TRIPPER_SNAPSHOT")`},
			{"prober found high clock drift", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2023-01-01T00:00:00.000000Z","caller":"rafthttp/probing_status.go:86","msg":"prober found high clock drift","round-tripper-name":"ROUND_TRIPPER_RAFT_MESSAGE","remote-peer-id":"25b94689aa475203","clock-drift":"1.071059639s","rtt":"1.2ms"}`},
		}},
	DBSpaceExceeded: {ID: "db_space_exceeded", Title: "the database reached its quota (NOSPACE alarm): only reads and deletes are served",
		Wordings: []Wording{
			{"mvcc: database space exceeded / etcdserver: no space (in a message or error field)", "3.1-3.7",
				`{"level":"warn","ts":"2022-03-13T17:21:30.783-0700","caller":"etcdserver/util.go:123","msg":"failed to apply request","took":"10.558µs","request":"header:<ID:16997569631274120200 > txn:<compare:<> success:<request_put:<key:\"/bootstrap/ef5238a9efa0\" value_size:12665 >> failure:<>>","response":"","error":"etcdserver: no space"}`},
			{"alarm raised %+v / alarm %v raised by peer %s (NOSPACE)", "3.1-3.2 / 3.3-3.4 (capnslog)",
				"2019-01-01 00:00:00.000000 W | etcdserver: alarm NOSPACE raised by peer 8e9e05c52164694d"},
			{"applying raft message exceeded backend quota", "3.1-3.4 (capnslog)",
				"2019-01-01 00:00:00.000000 E | etcdserver: applying raft message exceeded backend quota"},
			{`"message exceeded backend quota; raising alarm" / "alarm raised" with "alarm":"NOSPACE"`, "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2023-01-01T00:00:00.000000Z","caller":"etcdserver/server.go:2250","msg":"message exceeded backend quota; raising alarm","quota-size-bytes":2147483648,"quota-size":"2.1 GB","error":"mvcc: database space exceeded"}`},
		}},
	Compaction: {ID: "compaction", Title: "a scheduled MVCC compaction finished", Took: "compaction time",
		Wordings: []Wording{
			{"finished scheduled compaction at %d (took %v)", "3.1-3.4 (capnslog, mvcc)",
				"2017-03-20 02:34:42.790167 I | mvcc: finished scheduled compaction at 6350 (took 707.213µs)"},
			{"finished scheduled compaction", "3.4.0-3.7 (zap)",
				`{"level":"info","ts":"2023-01-01T00:00:00.000000Z","caller":"mvcc/kvstore_compaction.go:72","msg":"finished scheduled compaction","compact-revision":1234,"took":"12.3ms","hash":3921578813}`},
		}},
	CompactionFailed: {ID: "compaction_failed", Title: "an automatic compaction failed",
		Wordings: []Wording{
			{"Failed auto-compaction at revision %d (%v)", "3.3-3.4 (capnslog)",
				"2019-01-01 00:00:00.000000 N | compactor: Failed auto-compaction at revision 1234 (etcdserver: request timed out)"},
			{"failed auto periodic compaction / failed auto revision compaction / Failed compaction / compaction encountered error", "3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2023-01-01T00:00:00.000000Z","caller":"v3compactor/periodic.go:150","msg":"failed auto periodic compaction","revision":1234,"compact-period":"1h0m0s","retry-interval":"5m0s","error":"etcdserver: request timed out"}`},
		}},
	Defrag: {ID: "defrag", Title: "a defragmentation finished", Took: "defragmentation time",
		Wordings: []Wording{
			{"finished defragmenting the storage backend", "3.1-3.4 (capnslog)",
				"2019-01-01 00:00:00.000000 N | etcdserver/api/v3rpc: finished defragmenting the storage backend"},
			{"defragmented", "3.4 (zap, with took)",
				`{"level":"info","ts":"2021-01-01T00:00:00.000Z","caller":"backend/backend.go:497","msg":"defragmented","path":"/var/lib/etcd/member/snap/db","current-db-size-bytes-diff":-1048576,"current-db-size-bytes":2097152,"current-db-size":"2.1 MB","current-db-size-in-use-bytes-diff":-1024,"current-db-size-in-use-bytes":2000000,"current-db-size-in-use":"2.0 MB","took":"1.2s"}`},
			{"finished defragmenting directory", "3.5.0-3.7 (zap, with took)",
				`{"level":"info","ts":"2023-01-01T00:00:00.000000Z","caller":"backend/backend.go:580","msg":"finished defragmenting directory","path":"/var/lib/etcd/member/snap/db","current-db-size-bytes-diff":-1048576,"current-db-size-bytes":2097152,"current-db-size":"2.1 MB","current-db-size-in-use-bytes-diff":-1024,"current-db-size-in-use-bytes":2000000,"current-db-size-in-use":"2.0 MB","took":"1.2s"}`},
		}},
	DefragFailed: {ID: "defrag_failed", Title: "a defragmentation failed",
		Wordings: []Wording{
			{"failed to defragment the storage backend (%v) / \"failed to defragment\"", "3.1-3.4 (capnslog) / 3.4.0-3.7 (zap)",
				`{"level":"warn","ts":"2023-01-01T00:00:00.000000Z","caller":"v3rpc/maintenance.go:102","msg":"failed to defragment","error":"context canceled"}`},
		}},
}

// ID returns the class's stable id ("slow_apply").
func (c Class) ID() string {
	if c < numClasses {
		return Classes[c].ID
	}
	return "none"
}

// Title returns a one-line description of the class.
func (c Class) Title() string {
	if c < numClasses {
		return Classes[c].Title
	}
	return ""
}

// AllClasses returns every class in table order, ClassNone excluded.
func AllClasses() []Class {
	out := make([]Class, 0, numClasses-1)
	for c := Class(1); c < numClasses; c++ {
		out = append(out, c)
	}
	return out
}

// ClassByID returns the class with the given id.
func ClassByID(id string) (Class, bool) {
	for c := Class(1); c < numClasses; c++ {
		if Classes[c].ID == id {
			return c, true
		}
	}
	return ClassNone, false
}
