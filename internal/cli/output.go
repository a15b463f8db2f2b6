package cli

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/render"
	"github.com/etcdperf/etcdperf/internal/result"
)

// outputFlag is the repeatable -o flag: a format for stdout (text, json,
// csv) or a file whose extension names the format (run.json, run.csv,
// run.txt).
type outputFlag struct {
	values []string
}

func addOutputFlag(cmd *cobra.Command) *outputFlag {
	o := &outputFlag{}
	cmd.Flags().StringArrayVarP(&o.values, "output", "o", nil,
		"output: a format for stdout (text, json) or a file to write, its format taken from the extension (.json, .txt); repeatable")
	return o
}

type sink struct {
	format string // text, json
	path   string // "" for stdout
}

var formats = map[string]render.Func{
	"text": render.Text,
	"json": render.JSON,
}

var extensions = map[string]string{".json": "json", ".txt": "text"}

// sinks validates the -o values; it is called before a run starts so that a
// typo does not cost a whole measurement.
func (o *outputFlag) sinks() ([]sink, error) {
	var out []sink
	stdout := ""
	for _, v := range o.values {
		if _, ok := formats[v]; ok {
			if stdout != "" && stdout != v {
				return nil, usageError("-o %s and -o %s both want stdout; write one of them to a file, e.g. -o run.%s", stdout, v, v)
			}
			stdout = v
			continue
		}
		ext := strings.ToLower(filepath.Ext(v))
		f, ok := extensions[ext]
		if !ok {
			return nil, usageError("-o %q: not a format (text, json) nor a file ending in .json or .txt", v)
		}
		out = append(out, sink{format: f, path: v})
	}
	if stdout == "" {
		stdout = "text"
	}
	return append([]sink{{format: stdout}}, out...), nil
}

// write renders res to every sink. Files are written atomically.
func writeOutputs(stdout io.Writer, sinks []sink, res *result.Result) error {
	for _, s := range sinks {
		f := formats[s.format]
		if s.path == "" {
			if err := f(stdout, res); err != nil {
				return err
			}
			continue
		}
		var buf bytes.Buffer
		if err := f(&buf, res); err != nil {
			return err
		}
		if err := result.WriteFileAtomic(s.path, buf.Bytes()); err != nil {
			return fmt.Errorf("cannot write the result: %w", err)
		}
	}
	return nil
}

// finish writes the (possibly partial) Result and turns the run's error and
// verdict into the command's error.
func finish(cmd *cobra.Command, sinks []sink, res *result.Result, runErr error) error {
	if res != nil {
		if err := writeOutputs(cmd.OutOrStdout(), sinks, res); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	if res != nil && res.Verdict == result.Fail {
		return errVerdictFailed
	}
	return nil
}
