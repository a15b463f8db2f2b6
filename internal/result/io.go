package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/etcdperf/etcdperf/internal/version"
)

// New returns a Result of the given kind, stamped with the schema, the tool
// and the start time.
func New(kind string) *Result {
	return &Result{
		Schema:  Schema,
		Kind:    kind,
		Tool:    Tool{Name: "etcdperf", Version: version.String()},
		Started: time.Now().UTC().Truncate(time.Millisecond),
	}
}

// Finish stamps the end time.
func (r *Result) Finish() {
	r.Finished = time.Now().UTC().Truncate(time.Millisecond)
}

// Encode writes r as indented JSON.
func Encode(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteFile writes r as JSON to path atomically: it writes a temporary file
// in the same directory and renames it, so a reader never sees half a file.
func WriteFile(path string, r *Result) error {
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		return err
	}
	return WriteFileAtomic(path, buf.Bytes())
}

// WriteFileAtomic writes data to path through a temporary file and a rename.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Decode reads one Result and checks its schema.
func Decode(r io.Reader) (*Result, error) {
	dec := json.NewDecoder(r)
	var res Result
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("not an etcdperf Result: %w", err)
	}
	if res.Schema != Schema {
		if res.Schema == "" {
			return nil, fmt.Errorf("not an etcdperf Result: no \"schema\" field")
		}
		return nil, fmt.Errorf("unsupported schema %q (this etcdperf reads %q)", res.Schema, Schema)
	}
	return &res, nil
}

// ReadFile reads a Result from a file.
func ReadFile(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}
