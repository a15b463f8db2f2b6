package scale

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseObjects(t *testing.T) {
	cs, err := ParseObjects(" pods=100k, services=10000,Events=1.5k,nodes=1m")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name string
		n    int64
	}{{"pods", 100000}, {"services", 10000}, {"events", 1500}, {"nodes", 1000000}}
	if len(cs) != len(want) {
		t.Fatalf("%d kinds", len(cs))
	}
	for i, w := range want {
		if cs[i].Kind.Name != w.name || cs[i].N != w.n {
			t.Errorf("%d: %s=%d, want %s=%d", i, cs[i].Kind.Name, cs[i].N, w.name, w.n)
		}
	}
	if def, err := ParseObjects(DefaultObjects); err != nil || len(def) != 3 || def[0].N != 100000 {
		t.Errorf("default %v %v", def, err)
	}
	bad := map[string]string{
		"":                   "names no object",
		",,":                 "names no object",
		"pods":               "want kind=count",
		"deployments=5":      "unknown kind",
		"pods=0":             "at least 1",
		"pods=-3":            "at least 1",
		"pods=1.5":           "whole number",
		"pods=x":             "not a count",
		"pods=inf":           "not a count",
		"pods=11m":           "over the",
		"pods=1,pods=2":      "given twice",
		"pods=5,services=2=": "not a count",
	}
	for in, want := range bad {
		if _, err := ParseObjects(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		}
	}
}

func TestApplySizes(t *testing.T) {
	cs, _ := ParseObjects("pods=10,services=10")
	if err := ApplySizes(cs, []string{"2KiB", "services=uniform:100:200"}); err != nil {
		t.Fatal(err)
	}
	if cs[0].Kind.Size != (Dist{Shape: Fixed, A: 2048}) || cs[1].Kind.Size != (Dist{Shape: Uniform, A: 100, B: 200}) {
		t.Errorf("sizes %+v %+v", cs[0].Kind.Size, cs[1].Kind.Size)
	}
	// The table's defaults are untouched.
	if k, _ := KindByName("pods"); k.Size.Shape != LogNormal {
		t.Errorf("the kinds table changed: %+v", k.Size)
	}
	for spec, want := range map[string]string{
		"nodes=4k":    "--objects has no nodes",
		"widgets=4k":  "unknown kind",
		"pods=zipf:1": "unknown distribution",
		"3":           "at least 12 bytes",
	} {
		if err := ApplySizes(cs, []string{spec}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
}

func FuzzParseObjects(f *testing.F) {
	for _, s := range []string{DefaultObjects, "pods=5000", "pods=1.5k,services=2k", "nodes=1m", "pods=", "=3", "pods=1e3", "pods=0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseObjects(s)
		if err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error %q is not one line", s, err)
			}
			return
		}
		seen := map[string]bool{}
		var back []string
		for _, c := range cs {
			if c.N < 1 || c.N > MaxObjects || seen[c.Kind.Name] {
				t.Fatalf("%q gives %+v", s, cs)
			}
			if _, ok := KindByName(c.Kind.Name); !ok {
				t.Fatalf("%q gives unknown kind %q", s, c.Kind.Name)
			}
			seen[c.Kind.Name] = true
			back = append(back, fmt.Sprintf("%s=%d", c.Kind.Name, c.N))
		}
		// What was accepted reads back the same, written plainly.
		again, err := ParseObjects(strings.Join(back, ","))
		if err != nil || !reflect.DeepEqual(again, cs) {
			t.Fatalf("%q read as %v reads back as %+v, %v", s, back, again, err)
		}
	})
}

// FuzzApplySizes feeds --value-size specs (DIST for every kind, KIND=DIST
// for one): refused ones leave a one-line error, accepted ones give every
// kind sizes in range and change only the kind they name.
func FuzzApplySizes(f *testing.F) {
	for _, s := range []string{"4KiB", "pods=uniform:1KiB:8KiB", "events=normal:4k:1k", "Pods = lognormal:3KiB:0.5", "nodes=1k", "widgets=1k",
		"pods=", "=4k", "pods=events=4k", "pods=zipf:1", "3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		cs, err := ParseObjects(DefaultObjects)
		if err != nil {
			t.Fatal(err)
		}
		before := append([]Count(nil), cs...)
		if err := ApplySizes(cs, []string{spec}); err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error %q is not one line", spec, err)
			}
			return
		}
		name, _, one := strings.Cut(spec, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		changed := 0
		for i, c := range cs {
			if n := c.Kind.Size.Size(0.5, 0.5); n < MinValueSize || n > MaxValueSize {
				t.Fatalf("%q: %s draws %d bytes", spec, c.Kind.Name, n)
			}
			if c.Kind.Size != before[i].Kind.Size {
				changed++
				if one && c.Kind.Name != name {
					t.Fatalf("%q changed the sizes of %s", spec, c.Kind.Name)
				}
			}
		}
		if one && changed > 1 {
			t.Fatalf("%q changed %d kinds", spec, changed)
		}
	})
}
