package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// Finish stamps the end time; a run that ended early is marked incomplete
// (MarkIncomplete).
func (r *Result) Finish() {
	r.Finished = time.Now().UTC().Truncate(time.Millisecond)
	r.MarkIncomplete()
}

// IncompleteSummary is the summary of a run that ended early.
const IncompleteSummary = "the run ended early: what it measured until then is too little for a verdict"

// EndedEarly reports whether the run ended before it measured all it was
// asked to (Error is set).
func (r *Result) EndedEarly() bool { return r.Error != "" }

// MarkIncomplete gives a run that ended early the verdict Incomplete and a
// summary that says so, whatever its checks said of the part it measured:
// part of a run never reads as a pass, a warning or a failure.
func (r *Result) MarkIncomplete() {
	if !r.EndedEarly() {
		return
	}
	r.Verdict = Incomplete
	r.Summary = IncompleteSummary
}

// AddError records why the run ended early or failed (after what is
// already recorded, once) and marks it incomplete.
func (r *Result) AddError(msg string) {
	r.Error = JoinError(r.Error, msg)
	r.MarkIncomplete()
}

// JoinError appends the errors of msg to those of list (both "; "-separated)
// that are not already there: the same interruption seen by two stages is
// said once.
func JoinError(list, msg string) string {
	var have []string
	for _, e := range strings.Split(list+"; "+msg, "; ") {
		if e != "" && !slices.Contains(have, e) {
			have = append(have, e)
		}
	}
	return strings.Join(have, "; ")
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

// CheckWritable tells whether WriteFileAtomic can write path, before a run
// that would end by writing it: its directory exists and takes a new file,
// and path is not a directory. It creates and removes a temporary file as
// WriteFileAtomic does, and leaves nothing behind.
func CheckWritable(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return missingDirError(dir)
	case err != nil:
		return fmt.Errorf("directory %s: %w", dir, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		where := dir
		if abs, aerr := filepath.Abs(dir); aerr == nil && abs != dir {
			where += " (" + abs + ")"
		}
		return fmt.Errorf("cannot create a file in %s: %w", where, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// missingDirError is a directory that does not exist; it is an
// fs.ErrNotExist.
type missingDirError string

func (e missingDirError) Error() string        { return "directory " + string(e) + " does not exist" }
func (e missingDirError) Is(target error) bool { return target == fs.ErrNotExist }

// unwrapPath drops the operation and path of a *fs.PathError, which the
// caller's message already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
	res.upgrade()
	return &res, nil
}

// upgrade fills the fields that Results written by earlier versions of
// etcdperf kept elsewhere: the disk's sync mode was only a parameter.
func (r *Result) upgrade() {
	if r.Disk != nil && r.Disk.Sync == "" {
		switch p, ok := r.Params.(*DiskParams); {
		case ok && p.Sync != "":
			r.Disk.Sync = p.Sync
		case r.Disk.SyncLatency != nil:
			// doctor's probe, whose parameters are its load's: it syncs
			// as etcd does.
			r.Disk.Sync = "fdatasync"
		}
	}
	for i := range r.Runs {
		r.Runs[i].upgrade()
	}
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
