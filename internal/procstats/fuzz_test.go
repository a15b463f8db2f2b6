package procstats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, name := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("5281096 9280451 4\n")
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := ParseListeners(strings.NewReader(s))
		for _, l := range ls {
			if err == nil && (l.Port < 0 || l.Port > 65535 || (len(l.IP) != 4 && len(l.IP) != 16)) {
				t.Fatalf("%+v", l)
			}
		}
		if run, wait, _, err := ParseSchedstat(s); err == nil && (run < 0 || wait < 0) {
			t.Fatalf("negative times %v %v from %q", run, wait, s)
		}
	})
}
