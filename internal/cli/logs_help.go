package cli

// logsLong is logs's help.
const logsLong = `Read etcd's logs (3.1 to 3.7: capnslog text, zap JSON or zap console), count
the warnings etcd writes when its disk, network or CPU is too slow - "apply
request took too long", "failed to send out heartbeat on time", "slow
fdatasync", "request timed out", leader elections, peer failures, "database
space exceeded" - per member and per time bucket, with the durations they
report, the slowest requests and their key prefixes, and say whether the
pattern points to the disk, the network, or CPU and large requests.

FILE may be a log file (gzipped or not), a pattern (quote it), a directory
(must-gather, sosreport, /var/log/pods: files whose path names etcd and that
hold etcd log lines are read) or - for standard input. Lines may carry the
prefixes of kubectl logs --timestamps or --prefix, the container runtime's
log files, docker's json-file driver, journalctl -o short, short-iso or json,
docker compose or goreman, or the times of exported and pasted logs (an
RFC 3339 time, with or without a zone such as "UTC" after it, then etcd's
line or only its message; seconds since 1970, or since a test began before
etcd's line; Jenkins' time of day; go test's "logger.go:146: "). Other lines
are counted as not etcd lines.

The verdict is FAIL (exit 1) when the logs show etcd failing: request
timeouts, the space quota exhausted, WAL fdatasyncs over 1s, or 4 leader
changes within 15 minutes; WARN for slow requests, late heartbeats, peer
failures or clock drift; PASS when none of these warnings occur.`

// logsExample is logs's examples.
const logsExample = `  # The logs of a kubeadm etcd pod
  kubectl logs etcd-node1 -n kube-system --timestamps | etcdperf logs -

  # Rotated, gzipped logs, per minute, with every event in a CSV
  etcdperf logs /var/log/etcd/*.log.gz --bucket 1m -o events.csv

  # An OpenShift must-gather: every etcd member found in it
  etcdperf logs must-gather.local.12345/

  # etcd under systemd, and the Result as JSON
  journalctl -u etcd -o short-iso --since -2h | etcdperf logs - -o json`
