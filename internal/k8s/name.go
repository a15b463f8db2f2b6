package k8s

import (
	"bytes"
	"encoding/json"

	"github.com/etcdperf/etcdperf/internal/result"
)

// NameResult gives the Result that a command printed as JSON the name
// name (e.g. the node it measured: in a pod, the host name is the pod's),
// unless it has one. Output that is not exactly one Result is returned as
// it is.
func NameResult(out []byte, name string) []byte {
	if name == "" {
		return out
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var res result.Result
	if err := dec.Decode(&res); err != nil || res.Schema != result.Schema || res.Name != "" {
		return out
	}
	if len(bytes.TrimSpace(out[dec.InputOffset():])) > 0 {
		return out
	}
	res.Name = name
	var buf bytes.Buffer
	if err := result.Encode(&buf, &res); err != nil {
		return out
	}
	return buf.Bytes()
}
