package profile

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Profile is one load model of etcdctl check perf: how many clients put
// keys at what rate, for how long.
type Profile struct {
	Name    string
	Clients int
	// Rate is the puts per second the cluster must sustain.
	Rate float64
	// Duration is etcdctl's fixed run time.
	Duration time.Duration
	// KeySize and ValSize are the bytes of each key (after the prefix)
	// and value.
	KeySize, ValSize int
	Source           string
}

// Profiles are etcdctl check perf's load models, smallest first.
var Profiles = []Profile{
	{Name: "s", Clients: 50, Rate: 150, Duration: time.Minute, KeySize: 256, ValSize: 1024, Source: perfSource},
	{Name: "m", Clients: 200, Rate: 1000, Duration: time.Minute, KeySize: 256, ValSize: 1024, Source: perfSource},
	{Name: "l", Clients: 500, Rate: 8000, Duration: time.Minute, KeySize: 256, ValSize: 1024, Source: perfSource},
	{Name: "xl", Clients: 1000, Rate: 15000, Duration: time.Minute, KeySize: 256, ValSize: 1024, Source: perfSource},
}

const perfSource = "etcdctl check perf (etcdctl/ctlv3/command/check.go)"

// Scale is one load model of etcdctl check datascale: how many
// keys of what size are written by how many clients.
type Scale struct {
	Name    string
	Keys    int64
	Clients int
	// KeySize and ValSize are the bytes of each key (after the prefix)
	// and value; etcdctl writes 512 and 512, "1024 bytes per key-value".
	KeySize, ValSize int
	Source           string
}

// ScaleProfiles are etcdctl check datascale's load models, smallest first.
var ScaleProfiles = []Scale{
	{Name: "s", Keys: 10_000, Clients: 50, KeySize: 512, ValSize: 512, Source: scaleSource},
	{Name: "m", Keys: 100_000, Clients: 200, KeySize: 512, ValSize: 512, Source: scaleSource},
	{Name: "l", Keys: 1_000_000, Clients: 500, KeySize: 512, ValSize: 512, Source: scaleSource},
	{Name: "xl", Keys: 3_000_000, Clients: 1000, KeySize: 512, ValSize: 512, Source: scaleSource},
}

const scaleSource = "etcdctl check datascale (etcdctl/ctlv3/command/check.go)"

// profileAliases are the names etcdctl accepts for its --load flag.
var profileAliases = map[string]string{
	"s": "s", "small": "s",
	"m": "m", "medium": "m",
	"l": "l", "large": "l",
	"xl": "xl", "xlarge": "xl",
}

// lookup returns the item of a profile list called name (s, m, l, xl, or
// etcdctl's long names small, medium, large, xLarge).
func lookup[P any](list []P, nameOf func(P) string, name string) (P, error) {
	var zero P
	n, ok := profileAliases[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return zero, fmt.Errorf("--load %q: use s, m, l or xl (small, medium, large, xLarge)", name)
	}
	for _, p := range list {
		if nameOf(p) == n {
			return p, nil
		}
	}
	return zero, fmt.Errorf("no profile %q", n)
}

// Lookup returns the check perf profile called name (s, m, l, xl,
// or etcdctl's long names small, medium, large, xLarge).
func Lookup(name string) (Profile, error) {
	return lookup(Profiles, func(p Profile) string { return p.Name }, name)
}

// LookupScale returns the check datascale profile called name.
func LookupScale(name string) (Scale, error) {
	return lookup(ScaleProfiles, func(p Scale) string { return p.Name }, name)
}

// ClientsFor is how many clients check perf's profiles use at a rate
// (s 50 at 150/s, m 200 at 1,000, l 500 at 8,000, xl 1,000 at 15,000),
// interpolated on the log of the rate between them.
func ClientsFor(r float64) int {
	pts := Profiles
	if r <= pts[0].Rate {
		return pts[0].Clients
	}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if r <= b.Rate {
			f := math.Log(r/a.Rate) / math.Log(b.Rate/a.Rate)
			return int(math.Round(float64(a.Clients) + f*float64(b.Clients-a.Clients)))
		}
	}
	return pts[len(pts)-1].Clients
}
