package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	html   string // --html FILE: the HTML report, whatever FILE's extension
}

func addOutputFlag(cmd *cobra.Command) *outputFlag {
	o := &outputFlag{}
	cmd.Flags().StringArrayVarP(&o.values, "output", "o", nil,
		"output: a format for stdout (text, json, csv, html) or a file to write, its format taken from the extension (.txt, .json, .csv, .html); repeatable; stdout shows the text view unless a format is named for it")
	cmd.Flags().StringVar(&o.html, "html", "", "also write the self-contained HTML report (charts, verdict, findings) to this file")
	return o
}

type sink struct {
	format render.Format
	path   string // "" for stdout
}

// sinks validates the -o values; it is called before a run starts so that a
// typo does not cost a whole measurement.
func (o *outputFlag) sinks() ([]sink, error) {
	var out []sink
	var stdout *render.Format
	for _, v := range o.values {
		if f, ok := render.LookupFormat(v); ok {
			if stdout != nil && stdout.Name != f.Name {
				return nil, usageError("-o %s and -o %s both want stdout; write one of them to a file, e.g. -o run.%s", stdout.Name, v, v)
			}
			stdout = &f
			continue
		}
		f, ok := render.FormatForFile(v)
		if !ok {
			names, exts := render.FormatNames()
			return nil, usageError("-o %q: not a format (%s) nor a file ending in %s", v, strings.Join(names, ", "), strings.Join(exts, ", "))
		}
		out = append(out, sink{format: f, path: v})
	}
	if o.html != "" {
		f, ok := render.LookupFormat("html")
		if !ok {
			return nil, usageError("--html: this etcdperf was built without the HTML report")
		}
		out = append(out, sink{format: f, path: o.html})
	}
	for _, s := range out {
		flag := "-o"
		if s.path == o.html && s.format.Name == "html" {
			flag = "--html"
		}
		if err := checkWritable(flag, s.path); err != nil {
			return nil, err
		}
	}
	if stdout == nil {
		f, _ := render.LookupFormat("text")
		stdout = &f
	}
	return append([]sink{{format: *stdout}}, out...), nil
}

// checkWritable rejects, before a run, a file that flag names and that
// could not be written when the run ends.
func checkWritable(flag, path string) error {
	if err := result.CheckWritable(path); err != nil {
		return usageError("%s %s: %v; %s", flag, path, err, writableHint(err, path, "write the file elsewhere"))
	}
	return nil
}

// writableHint says what to do about a file that cannot be written.
func writableHint(err error, path, elsewhere string) string {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("create the directory (mkdir -p %s) or %s", filepath.Dir(path), elsewhere)
	}
	return elsewhere
}

// writeOutputs renders res to every sink. Files are written atomically.
func writeOutputs(stdout io.Writer, sinks []sink, res *result.Result) error {
	for _, s := range sinks {
		if s.path == "" {
			if err := s.format.Render(stdout, res); err != nil {
				return err
			}
			continue
		}
		var buf bytes.Buffer
		if err := s.format.Render(&buf, res); err != nil {
			return fmt.Errorf("cannot write %s: %w", s.path, err)
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

// completeRun is the RunE of a command whose flags complete into the
// run's options: -o's outputs checked, then the flags completed (a usage
// error before anything runs), then the run.
func completeRun[O any](out *outputFlag, complete func(*cobra.Command) (O, error), run func(*cobra.Command, []sink, O) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		sinks, err := out.sinks()
		if err != nil {
			return err
		}
		o, err := complete(cmd)
		if err != nil {
			return err
		}
		return run(cmd, sinks, o)
	}
}
