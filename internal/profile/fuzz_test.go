package profile

import (
	"strings"
	"testing"
)

// FuzzLookup feeds --load values of check and doctor (and check
// datascale): refused ones leave a one-line error, accepted ones are one
// of the profiles, found again by their own name.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"s", "m", "l", "xl", "xLarge", " Medium ", "small", "q", "", "xxl", "s\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p, err := Lookup(name)
		sp, serr := LookupScale(name)
		if (err == nil) != (serr == nil) {
			t.Fatalf("%q: check perf %v, datascale %v", name, err, serr)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") || strings.Contains(serr.Error(), "\n") {
				// A name with a newline is quoted, never printed raw.
				t.Fatalf("%q: error %q is not one line", name, err)
			}
			return
		}
		if again, err := Lookup(p.Name); err != nil || again != p || p.Rate <= 0 || p.Clients <= 0 {
			t.Fatalf("%q gives %+v, and %q gives %+v, %v", name, p, p.Name, again, err)
		}
		if sp.Name != p.Name {
			t.Fatalf("%q: check perf profile %s, datascale %s", name, p.Name, sp.Name)
		}
	})
}
