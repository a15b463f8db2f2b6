package report

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
	"github.com/etcdperf/etcdperf/internal/units"
)

// redacted replaces a secret in the report.
const redacted = "[redacted]"

// secretWords are parts of keys whose values are never shown, whatever the
// command that wrote them meant: no Result should hold a password or a
// token, and the report makes sure none reaches a page that is attached to
// tickets.
var secretWords = []string{"password", "passwd", "passphrase", "pwd", "secret", "token", "credential",
	"apikey", "privatekey", "authorization", "bearer", "cookie", "session"}

// isSecretKey reports whether a key (in any case, with - _ . or spaces)
// names a secret.
func isSecretKey(key string) bool {
	k := strings.ToLower(key)
	k = strings.NewReplacer("-", "", "_", "", ".", "", " ", "").Replace(k)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

var (
	// userinfo in a URL: https://user:secret@host
	urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^@\s/]*@`)
	// key=value pairs with a secret key: password=..., token: ...
	pairSecret = regexp.MustCompile(`(?i)\b([a-z_-]*(?:password|passwd|secret|token)[a-z_-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&,;]+)`)
)

// scrubText removes secrets from free text: a URL's password and the value
// of key=value pairs whose key names a secret.
func scrubText(s string) string {
	s = urlPassword.ReplaceAllString(s, "$1:"+redacted+"@")
	return pairSecret.ReplaceAllString(s, "$1$2"+redacted)
}

// scrubValue returns what may be shown of the value under key.
func scrubValue(key, v string) string {
	if isSecretKey(key) {
		return redacted
	}
	// etcdctl's --user takes "name:password".
	last := key[strings.LastIndex(key, ".")+1:]
	if strings.EqualFold(last, "user") {
		if i := strings.IndexByte(v, ':'); i >= 0 {
			return v[:i+1] + redacted
		}
	}
	return scrubText(v)
}

// Setting is one line of a run's parameters or environment.
type Setting struct {
	Key, Value string
}

// settings flattens a run's environment and parameters into sorted lines
// ("env.fs_type", "params.bs"), secrets redacted.
func settings(r *result.Result) []Setting {
	var out []Setting
	if r.Env != nil {
		var m map[string]any
		if b, err := json.Marshal(r.Env); err == nil && json.Unmarshal(b, &m) == nil {
			out = flatten("env", m, out)
		}
	}
	if r.Target != nil && r.Target.Kind == "embedded" {
		// An embedded member's endpoint was a free port of the run, gone
		// with it: say so where it is listed.
		for i := range out {
			if out[i].Key == "env.endpoints" && out[i].Value != "" {
				out[i].Value += " (the run's embedded member, gone with it)"
			}
		}
	}
	out = flatten("params", r.Params, out)
	if r.Tool.Version != "" {
		out = append(out, Setting{"tool.version", r.Tool.Version})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func flatten(prefix string, v any, out []Setting) []Setting {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			key := prefix + "." + k
			if isSecretKey(k) {
				out = append(out, Setting{key, redacted})
				continue
			}
			out = flatten(key, e, out)
		}
		return out
	case []any:
		for i, e := range t {
			out = flatten(fmt.Sprintf("%s.%d", prefix, i), e, out)
		}
		return out
	case nil:
		return out
	case string:
		return append(out, Setting{prefix, scrubValue(prefix, t)})
	case float64:
		return append(out, Setting{prefix, settingNumber(prefix, t)})
	case bool:
		return append(out, Setting{prefix, strconv.FormatBool(t)})
	}
	// Params are their kind's struct (result.Params), or a map for a kind
	// this version cannot type. Read them as their JSON has them, so that
	// nested secrets are seen.
	b, err := json.Marshal(v)
	var back any
	if err != nil || json.Unmarshal(b, &back) != nil {
		return append(out, Setting{prefix, scrubValue(prefix, fmt.Sprint(v))})
	}
	return flatten(prefix, back, out)
}

// Params hold durations in seconds and sizes in bytes (the Result
// contract); these are their names, whatever the command.
var (
	durationParams = map[string]bool{"duration": true, "command_timeout": true, "dial_timeout": true, "runtime": true,
		"disk_runtime": true, "simulate_fsync_delay": true, "bucket": true, "interval": true, "step": true,
		"list_interval": true, "event_ttl": true, "lease_ttl": true, "window": true}
	sizeParams = map[string]bool{"bs": true, "size": true, "disk_size": true, "key_size": true, "val_size": true}
)

// settingNumber prints a number of the params or the environment with its
// unit when its name says it has one (2.5s, 22 MiB); a key space of every
// possible key (the largest integer) is unbounded.
func settingNumber(key string, v float64) string {
	name := key[strings.LastIndex(key, ".")+1:]
	switch {
	case strings.HasPrefix(key, "params.") && durationParams[name] && v >= 0:
		return units.Seconds(v)
	case strings.HasPrefix(key, "params.") && sizeParams[name] && v >= 0 && v == math.Trunc(v) && v < 1<<62:
		return units.Size(int64(v))
	case strings.HasPrefix(key, "params.") && (name == "rate" || name == "update_rate"):
		return strconv.FormatFloat(v, 'f', -1, 64) + "/s"
	case name == "key_space_size" && v >= math.MaxInt64:
		return "unbounded (a new random key each time)"
	case name == "mem_bytes" && v >= 0 && v < 1<<62:
		return units.Bytes(v)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
