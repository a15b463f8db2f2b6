package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Extract finds the Results in data: a document as `-o json` writes it, the
// same printed into a log among other lines (a pod's log, where the tool's
// output follows and precedes other lines), or several of them one after
// another (the logs of several pods). Each line's first '{' is tried as the
// start of a Result; lines that are not one, including other JSON logs,
// are skipped. A Result of another schema and a Result cut short (the log
// ends inside it) are errors rather than being skipped silently.
func Extract(data []byte) ([]*Result, error) {
	var out []*Result
	line := 1
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			next = pos + end + 1
		}
		brace := bytes.IndexByte(data[pos:next], '{')
		if brace < 0 {
			pos, line = next, line+1
			continue
		}
		start := pos + brace
		res, n, err := decodeAt(data[start:])
		switch {
		case err != nil:
			return nil, fmt.Errorf("line %d: %w", line, err)
		case res == nil:
			pos, line = next, line+1
		default:
			out = append(out, res)
			line += bytes.Count(data[pos:start+n], []byte{'\n'})
			pos = start + n
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no etcdperf Result in it (expected the JSON document that -o json writes, possibly among log lines)")
	}
	return out, nil
}

// decodeAt decodes the JSON object at the start of b. It returns the Result
// and the bytes it took when it is one; nil when b does not start an
// etcdperf Result; an error when it starts one that cannot be read.
func decodeAt(b []byte) (*Result, int, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) && bytes.Contains(b, []byte(`"`+Schema+`"`)) {
			return nil, 0, fmt.Errorf("an etcdperf Result is cut short (the input ends inside it)")
		}
		return nil, 0, nil
	}
	var head struct {
		Schema any `json:"schema"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return nil, 0, nil
	}
	schema, _ := head.Schema.(string)
	switch {
	case schema == Schema:
		var res Result
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, 0, fmt.Errorf("not a valid etcdperf Result: %w", err)
		}
		res.upgrade()
		return &res, int(dec.InputOffset()), nil
	case strings.HasPrefix(schema, "etcdperf/"):
		return nil, 0, fmt.Errorf("unsupported schema %q (this etcdperf reads %q)", schema, Schema)
	}
	return nil, 0, nil
}
