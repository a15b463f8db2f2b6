package testutil

import (
	"fmt"
	"io"
	"time"
)

// WriteEtcdLog writes about size bytes of a synthetic but realistic etcd
// log of a loaded Kubernetes cluster: zap JSON as etcd 3.5 writes it
// (routine info lines, slow read-only ranges with their requests, traces,
// slow request stats, late heartbeats, slow fdatasyncs), a share of
// capnslog lines as 3.3 writes them, and lines behind kubectl's
// --timestamps. The lines' shapes are copied from the real lines in
// internal/etcdlog/testdata/real; keys, durations and times vary.
// It returns the number of lines written.
func WriteEtcdLog(w io.Writer, size int64) (int64, error) {
	t := time.Date(2024, 4, 22, 9, 0, 0, 0, time.UTC)
	buf := make([]byte, 0, 1<<20)
	var written, lines int64
	for i := 0; written+int64(len(buf)) < size; i++ {
		t = t.Add(time.Duration(1+i%7) * time.Millisecond)
		ts := t.Format("2006-01-02T15:04:05.000000Z")
		ns, pod := i%37, i%1013
		took := time.Duration(100+i%900)*time.Millisecond + time.Duration(i%1000)*time.Microsecond
		switch i % 20 {
		case 0, 1, 2, 3, 4, 5:
			buf = fmt.Appendf(buf, `{"level":"info","ts":"%s","caller":"etcdserver/server.go:2435","msg":"compacted Raft logs","compact-index":%d}`+"\n", ts, 3195047+i)
		case 6, 7:
			buf = fmt.Appendf(buf, `{"level":"info","ts":"%s","caller":"mvcc/index.go:214","msg":"compact tree index","revision":%d}`+"\n", ts, 17787174+i)
		case 8, 9, 10, 11:
			buf = fmt.Appendf(buf, `{"level":"warn","ts":"%s","caller":"etcdserver/util.go:170","msg":"apply request took too long","took":"%s","expected-duration":"100ms","prefix":"read-only range ","request":"key:\"/registry/pods/ns-%d/\" range_end:\"/registry/pods/ns-%d0\" limit:500 ","response":"range_response_count:%d size:%d"}`+"\n",
				ts, took, ns, ns, pod%500, 1000+pod*291)
		case 12, 13:
			buf = fmt.Appendf(buf, `{"level":"info","ts":"%s","caller":"traceutil/trace.go:171","msg":"trace[%d] range","detail":"{range_begin:/registry/pods/ns-%d/; range_end:/registry/pods/ns-%d0; response_count:%d; response_revision:%d; }","duration":"%s","start":"%s","end":"%s","steps":["trace[%d] 'agreement among raft nodes before linearized reading'  (duration: %s)"],"step_count":1}`+"\n",
				ts, 1103223440+i, ns, ns, pod%500, 17787174+i, took, ts, ts, 1103223440+i, took)
		case 14:
			buf = fmt.Appendf(buf, `{"level":"warn","ts":"%s","caller":"v3rpc/interceptor.go:197","msg":"request stats","start time":"%s","time spent":"%s","remote":"127.0.0.1:39294","response type":"/etcdserverpb.KV/Range","request count":0,"request size":28,"response count":%d,"response size":%d,"request content":"key:\"/registry/leases/kube-node-lease/node-%d\" "}`+"\n",
				ts, ts, took, pod%3, 290, pod)
		case 15:
			buf = fmt.Appendf(buf, `{"level":"warn","ts":"%s","caller":"etcdserver/raft.go:369","msg":"leader failed to send out heartbeat on time; took too long, leader is overloaded likely from slow disk","to":"63b75c3d731594fc","heartbeat-interval":"100ms","expected-duration":"200ms","exceeded-duration":"%s"}`+"\n",
				ts, took/10)
		case 16:
			buf = fmt.Appendf(buf, `{"level":"warn","ts":"%s","caller":"wal/wal.go:802","msg":"slow fdatasync","took":"%s","expected-duration":"1s"}`+"\n", ts, time.Second+took)
		case 17:
			buf = fmt.Appendf(buf, "%s W | etcdserver: read-only range request \"key:\\\"/registry/services/specs/ns-%d/svc-%d\\\" \" with result \"range_response_count:1 size:293\" took too long (%s) to execute\n",
				t.Format("2006-01-02 15:04:05.000000"), ns, pod, took)
		case 18:
			buf = fmt.Appendf(buf, "%s I | raft: raft.node: 81d3efb022aab98c elected leader a8632945c6037cf8 at term %d\n", t.Format("2006-01-02 15:04:05.000000"), 3+i/20)
		case 19:
			buf = fmt.Appendf(buf, `%s {"level":"info","ts":"%s","caller":"fileutil/purge.go:77","msg":"purged","path":"/var/lib/etcd/member/snap/0000000000000005-%016x.snap"}`+"\n",
				t.Format(time.RFC3339Nano), ts, 2700000+i)
		}
		lines++
		if len(buf) >= 1<<20-4096 {
			n, err := w.Write(buf)
			written += int64(n)
			if err != nil {
				return lines, err
			}
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		n, err := w.Write(buf)
		written += int64(n)
		if err != nil {
			return lines, err
		}
	}
	return lines, nil
}
