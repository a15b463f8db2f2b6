package units

import "testing"

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"2300": 2300, "4k": 4096, "4K": 4096, "4KiB": 4096, "4kb": 4096, "22m": 22 << 20,
		"22MiB": 22 << 20, "1g": 1 << 30, "10Gi": 10 << 30, "1.5k": 1536, " 8m ": 8 << 20, "0": 0,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "m", "22x", "-1k", "1.3", "1e3", "99999999t", "k4"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestSeconds(t *testing.T) {
	cases := map[float64]string{
		0: "0s", 0.010: "10ms", 0.0087: "8.7ms", 0.000387: "387µs", 0.00000158: "1.58µs",
		1.5: "1.5s", 0.0211: "21.1ms", 5e-7: "500ns", 123.4: "123s", 4321.5: "4322s",
	}
	for in, want := range cases {
		if got := Seconds(in); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestBytes(t *testing.T) {
	cases := map[float64]string{2300: "2.2 KiB", 100: "100 B", 22 << 20: "22.0 MiB", 3 << 30: "3.0 GiB"}
	for in, want := range cases {
		if got := Bytes(in); got != want {
			t.Errorf("Bytes(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	cases := map[int64]string{2300: "2300 B", 0: "0 B", 4096: "4 KiB", 22 << 20: "22 MiB", 3 << 30: "3 GiB", 1536: "1536 B"}
	for in, want := range cases {
		got := Size(in)
		if got != want {
			t.Errorf("Size(%d) = %q, want %q", in, got, want)
		}
		if back, err := ParseSize(got); err != nil || back != in {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", got, back, err, in)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"2300", "22m", "4KiB", "1.5g", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n < 0 {
			t.Errorf("ParseSize(%q) = %d, negative without error", s, n)
		}
	})
}

func TestThousands(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567", -4000: "-4,000", -999: "-999", 150: "150"} {
		if got := Thousands(v); got != want {
			t.Errorf("Thousands(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestP99(t *testing.T) {
	if got := P99(0.0004, true); got != "<= 1ms" {
		t.Errorf("P99 at etcd's floor = %q, want <= 1ms", got)
	}
	if got := P99(0.0123, false); got != "12.3ms" {
		t.Errorf("P99(12.3ms) = %q", got)
	}
}

// Every unit the findings' evidence uses prints as a figure, not as a
// raw float: a soak's puts/s served printed 417.3923480017365 1/s.
func TestValueUnits(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{417.3923480017365, "1/s", "417/s"},
		{292.4, "IOPS", "292/s"},
		{292.4, "ops/s", "292/s"},
		{2 << 20, "B/s", "2.0 MiB/s"},
		{2 << 20, "bytes/s", "2.0 MiB/s"},
		{0.0123, "s", "12.3ms"},
	} {
		if got := Value(c.v, c.unit); got != c.want {
			t.Errorf("Value(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
