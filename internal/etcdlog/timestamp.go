package etcdlog

import (
	"math"
	"strconv"
	"time"
)

// timeParser turns the timestamps etcd and its wrappers write into times.
// It caches the start of the last day it computed, so that consecutive
// lines cost a few digit conversions each.
type timeParser struct {
	// loc is where times without a zone are read (capnslog writes the
	// local wall clock without a zone); nil means UTC.
	loc      *time.Location
	dayKey   int64 // year*10000+month*100+day of dayUnix
	dayUnix  int64 // Unix seconds of that day's midnight, UTC
	dayValid bool
}

func digits(b []byte, n int) (int, bool) {
	if len(b) < n {
		return 0, false
	}
	v := 0
	for _, c := range b[:n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseISO reads "YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|±HH:MM|±HHMM]" at the
// start of b. It returns the time, the bytes used and whether the text
// named its zone; a time without zone is read in the parser's location.
func (tp *timeParser) parseISO(b []byte) (time.Time, int, bool, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return time.Time{}, 0, false, false
	}
	y, ok1 := digits(b, 4)
	mo, ok2 := digits(b[5:], 2)
	d, ok3 := digits(b[8:], 2)
	h, ok4 := digits(b[11:], 2)
	mi, ok5 := digits(b[14:], 2)
	s, ok6 := digits(b[17:], 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return time.Time{}, 0, false, false
	}
	n := 19
	ns := 0
	if n < len(b) && (b[n] == '.' || b[n] == ',') {
		n++
		scale := 100000000
		start := n
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			if scale > 0 {
				ns += int(b[n]-'0') * scale
				scale /= 10
			}
			n++
		}
		if n == start {
			return time.Time{}, 0, false, false
		}
	}
	hasZone := false
	offset := 0
	if n < len(b) {
		switch b[n] {
		case 'Z':
			hasZone = true
			n++
		case '+', '-':
			oh, ok := digits(b[n+1:], 2)
			if !ok {
				break
			}
			m := n + 3
			if m < len(b) && b[m] == ':' {
				m++
			}
			om, ok := digits(b[m:], 2)
			if !ok {
				break
			}
			offset = oh*3600 + om*60
			if b[n] == '-' {
				offset = -offset
			}
			hasZone = true
			n = m + 2
		}
	}
	if !hasZone && tp.loc != nil && tp.loc != time.UTC {
		return time.Date(y, time.Month(mo), d, h, mi, s, ns, tp.loc).UTC(), n, false, true
	}
	key := int64(y)*10000 + int64(mo)*100 + int64(d)
	if key != tp.dayKey || !tp.dayValid {
		tp.dayKey, tp.dayValid = key, true
		tp.dayUnix = time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).Unix()
	}
	sec := tp.dayUnix + int64(h*3600+mi*60+s) - int64(offset)
	return time.Unix(sec, int64(ns)).UTC(), n, hasZone, true
}

// parseEpoch reads a floating-point number of seconds since 1970 (zap's
// EpochTimeEncoder) or, for values too large to be seconds, milliseconds,
// microseconds or nanoseconds.
func parseEpoch(b []byte) (time.Time, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return time.Time{}, false
	}
	switch {
	case f < 1e11: // seconds until year 5138
	case f < 1e14:
		f /= 1e3
	case f < 1e17:
		f /= 1e6
	default:
		f /= 1e9
	}
	if f > 1e11 {
		return time.Time{}, false
	}
	// A float64 holds about 16 digits: microseconds at most, at today's
	// epoch.
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3).UTC(), true
}

var months = [...]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

// parseSyslog reads syslog's "Mon DD HH:MM:SS" (journalctl -o short, the
// classic /var/log/messages), returning the time in year and the bytes
// used. Month names are matched without regard to case.
func (tp *timeParser) parseSyslog(b []byte, year int) (time.Time, int, bool) {
	if len(b) < 15 || b[3] != ' ' || b[6] != ' ' || b[9] != ':' || b[12] != ':' {
		return time.Time{}, 0, false
	}
	mo := 0
	for i, m := range months {
		if lower(b[0]) == m[0] && lower(b[1]) == m[1] && lower(b[2]) == m[2] {
			mo = i + 1
			break
		}
	}
	if mo == 0 {
		return time.Time{}, 0, false
	}
	dd := b[4:6]
	if dd[0] == ' ' {
		dd = dd[1:]
	}
	d, ok := digits(dd, len(dd))
	h, ok2 := digits(b[7:], 2)
	mi, ok3 := digits(b[10:], 2)
	s, ok4 := digits(b[13:], 2)
	if !(ok && ok2 && ok3 && ok4) || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return time.Time{}, 0, false
	}
	n := 15
	ns := 0
	if n < len(b) && b[n] == '.' {
		n++
		scale := 100000000
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			if scale > 0 {
				ns += int(b[n]-'0') * scale
				scale /= 10
			}
			n++
		}
	}
	loc := tp.loc
	if loc == nil {
		loc = time.UTC
	}
	return time.Date(year, time.Month(mo), d, h, mi, s, ns, loc).UTC(), n, true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
