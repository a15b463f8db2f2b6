package render

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/etcdperf/etcdperf/internal/result"
)

// Format is an output format: a name for -o and the file extensions that
// select it.
type Format struct {
	Name       string
	Extensions []string
	Render     Func
}

var formatsByName = map[string]Format{}

// RegisterFormat adds an output format; it is meant for init functions.
func RegisterFormat(f Format) { formatsByName[f.Name] = f }

// LookupFormat returns the format called name.
func LookupFormat(name string) (Format, bool) {
	f, ok := formatsByName[name]
	return f, ok
}

// FormatForFile returns the format that a file name's extension selects.
func FormatForFile(path string) (Format, bool) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range formatsByName {
		for _, e := range f.Extensions {
			if e == ext {
				return f, true
			}
		}
	}
	return Format{}, false
}

// FormatNames lists the registered formats and extensions, for messages.
func FormatNames() (names, exts []string) {
	for _, f := range formatsByName {
		names = append(names, f.Name)
		exts = append(exts, f.Extensions...)
	}
	sort.Strings(names)
	sort.Strings(exts)
	return names, exts
}

var csvRenderers = map[string]Func{}

// RegisterCSV sets the CSV view of a Result kind.
func RegisterCSV(kind string, f Func) { csvRenderers[kind] = f }

// CSV writes the tabular view of r, if its kind has one.
func CSV(w io.Writer, r *result.Result) error {
	f, ok := csvRenderers[r.Kind]
	if !ok {
		return fmt.Errorf("a %s result has no CSV view; use -o json or -o text", r.Kind)
	}
	return f(w, r)
}

func init() {
	RegisterFormat(Format{Name: "text", Extensions: []string{".txt"}, Render: Text})
	RegisterFormat(Format{Name: "json", Extensions: []string{".json"}, Render: JSON})
	RegisterFormat(Format{Name: "csv", Extensions: []string{".csv"}, Render: CSV})
}
