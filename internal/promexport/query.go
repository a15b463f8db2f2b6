package promexport

import (
	"fmt"
	"strings"
)

// Query is one named PromQL expression; Name heads its columns.
type Query struct {
	Name string
	Expr string
	// Unit of the values, when known: "s", "bytes", "bytes/s", "ops/s",
	// "count".
	Unit string
}

// ParseQuery reads a --query flag: NAME=PROMQL, e.g.
// "puts=rate(etcd_mvcc_put_total[1m])". The name is a Prometheus metric
// name (letters, digits, _ and :, not starting with a digit); the
// expression is everything after the first '='.
func ParseQuery(s string) (Query, error) {
	name, expr, ok := strings.Cut(s, "=")
	name, expr = strings.TrimSpace(name), strings.TrimSpace(expr)
	if !ok || name == "" || expr == "" {
		return Query{}, fmt.Errorf("--query %q: want NAME=PROMQL, e.g. puts='rate(etcd_mvcc_put_total[5m])'", s)
	}
	if err := checkName(name); err != nil {
		return Query{}, fmt.Errorf("--query %q: %w", s, err)
	}
	return Query{Name: name, Expr: expr}, nil
}

func checkName(name string) error {
	for i, c := range name {
		switch {
		case c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return fmt.Errorf("name %q: use letters, digits, _ and : (not starting with a digit)", name)
		}
	}
	if name == "time" || name == "unix" {
		return fmt.Errorf("name %q is taken by the table's time columns", name)
	}
	return nil
}

// CheckUnique rejects two queries with the same name.
func CheckUnique(qs []Query) error {
	seen := map[string]bool{}
	for _, q := range qs {
		if seen[q.Name] {
			return fmt.Errorf("two queries are named %q: give each --query its own name", q.Name)
		}
		seen[q.Name] = true
	}
	return nil
}

// ParseSelector reads a --selector flag: label matchers added to every
// preset and check query, written with or without braces, e.g.
// job="etcd" or {job="etcd",cluster=~"prod.*"}. It returns them without
// braces; Prometheus checks their syntax when the queries run.
func ParseSelector(s string) (string, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		t = strings.TrimSpace(t[1 : len(t)-1])
	}
	t = strings.TrimSuffix(t, ",")
	if t == "" {
		return "", nil
	}
	if !matchersOnly(t) {
		return "", fmt.Errorf("--selector %q: want label matchers such as job=\"etcd\" or {job=\"etcd\",instance=~\"10.0.0.*\"}", s)
	}
	return t, nil
}

// matchersOnly reports whether s looks like label matchers: outside quoted
// strings only label names, spaces, commas and the operators =, !=, =~, !~,
// with every quote closed and at least one operator. It keeps a selector
// from closing the braces it is put in.
func matchersOnly(s string) bool {
	ops := 0
	var quote rune
	escaped := false
	for _, c := range s {
		switch {
		case quote != 0:
			switch {
			case escaped:
				escaped = false
			case c == '\\' && quote != '`':
				escaped = true
			case c == quote:
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '=':
			ops++
		case c == '_' || c == ',' || c == ' ' || c == '!' || c == '~' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return quote == 0 && ops > 0
}
