package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/internal/cluster"
)

// passwordEnv holds the password of --user when it is not typed.
const passwordEnv = "ETCDPERF_PASSWORD"

// etcdctl's environment, read as etcdctl v3 reads it (etcd's pkg/flags):
// each connection flag has a variable ETCDCTL_ + its name in capitals with
// _ for -, used when the flag is not given; an empty variable is unset.
const (
	endpointsEnv       = "ETCDCTL_ENDPOINTS"
	etcdctlPasswordEnv = "ETCDCTL_PASSWORD"
)

// connEnvFlags are the connection flags etcdctl's environment can set.
var connEnvFlags = []string{"endpoints", "cacert", "cert", "key", "insecure-skip-tls-verify", "user", "dial-timeout", "command-timeout"}

// envName is etcdctl's variable of a flag: dial-timeout -> ETCDCTL_DIAL_TIMEOUT.
func envName(flag string) string {
	return "ETCDCTL_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// connFlags are etcdctl's connection flags, the same on every command
// that talks to etcd.
type connFlags struct {
	endpoints      []string
	cacert         string
	cert, key      string
	insecureSkip   bool
	user           string
	dialTimeout    time.Duration
	commandTimeout time.Duration
	// notes say on stderr what came from etcdctl's environment (announce).
	notes []string
	// endpointsFound says that, without endpoints, the command finds them
	// itself (doctor --node: the node's etcd) instead of starting an
	// embedded etcd: the TLS and auth settings then apply to them.
	endpointsFound bool
	// ignoreEnvEndpoints, when set, is what the command does without
	// --endpoints (doctor: "judges the storage under ."): it then loads
	// only a cluster named on the command line, and ETCDCTL_ENDPOINTS is
	// ignored and said so.
	ignoreEnvEndpoints string
	// envEndpointsNote is the index in notes of the note that says the
	// endpoints came from ETCDCTL_ENDPOINTS (-1: none), which announceLoad
	// completes with the load.
	envEndpointsNote int
}

// addConnFlags defines etcdctl's connection flags on cmd.
func addConnFlags(cmd *cobra.Command) *connFlags {
	c := &connFlags{envEndpointsNote: -1}
	fl := cmd.Flags()
	fl.StringSliceVar(&c.endpoints, "endpoints", nil, "etcd client endpoints (host:port or http(s)://host:port, comma-separated; default "+endpointsEnv+"); none: start an embedded etcd")
	fl.StringVar(&c.cacert, "cacert", "", "verify the servers' certificates with this CA bundle")
	fl.StringVar(&c.cert, "cert", "", "client certificate for TLS")
	fl.StringVar(&c.key, "key", "", "client key for TLS")
	fl.BoolVar(&c.insecureSkip, "insecure-skip-tls-verify", false, "accept any server certificate (testing only)")
	fl.StringVar(&c.user, "user", "", "user[:password] for etcd's auth; the password comes from "+passwordEnv+", "+etcdctlPasswordEnv+" or a prompt when not given")
	fl.DurationVar(&c.dialTimeout, "dial-timeout", cluster.DefaultDialTimeout, "give up connecting to an endpoint after this long")
	fl.DurationVar(&c.commandTimeout, "command-timeout", cluster.DefaultCommandTimeout, "give up on one request after this long (it counts as an error)")
	return c
}

// connValues are the connection settings once etcdctl's environment has
// filled what the flags left unset; from names where each set one came
// from (--flag or the variable).
type connValues struct {
	connFlags
	from map[string]string
}

// fromEnv reports whether the setting of flag came from the environment.
func (v *connValues) fromEnv(flag string) bool { return strings.HasPrefix(v.from[flag], "ETCDCTL_") }

// source names where flag's value came from: --flag or its variable.
func (v *connValues) source(flag string) string {
	if s, ok := v.from[flag]; ok {
		return s
	}
	return "--" + flag
}

// set parses an environment variable's value into the setting of flag,
// as the flag would.
func (v *connValues) set(flag, val string) error {
	switch flag {
	case "endpoints":
		var eps []string
		for _, ep := range strings.Split(val, ",") {
			if ep = strings.TrimSpace(ep); ep != "" {
				eps = append(eps, ep)
			}
		}
		if len(eps) == 0 {
			return fmt.Errorf("no endpoint in %q", val)
		}
		v.endpoints = eps
	case "cacert":
		v.cacert = val
	case "cert":
		v.cert = val
	case "key":
		v.key = val
	case "user":
		v.user = val
	case "insecure-skip-tls-verify":
		b, err := strconv.ParseBool(val)
		if err != nil {
			return fmt.Errorf("%q is not true or false", val)
		}
		v.insecureSkip = b
	case "dial-timeout", "command-timeout":
		d, err := time.ParseDuration(val)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 5s or 500ms", val)
		}
		if flag == "dial-timeout" {
			v.dialTimeout = d
		} else {
			v.commandTimeout = d
		}
	}
	return nil
}

// resolve fills what the flags left unset from etcdctl's environment: a
// flag given wins over its variable, as in etcdctl 3.3 (from 3.4 etcdctl
// refuses to run with both, etcd-io/etcd#9382). A bad value is a usage
// error naming the variable. It also prepares the notes of announce.
func (c *connFlags) resolve(cmd *cobra.Command) (*connValues, error) {
	fl := cmd.Flags()
	v := &connValues{connFlags: *c, from: map[string]string{}}
	v.notes, v.envEndpointsNote = nil, -1
	var shadowed []string
	for _, name := range connEnvFlags {
		env := envName(name)
		val := os.Getenv(env)
		if name == "endpoints" && c.ignoreEnvEndpoints != "" && !fl.Changed(name) && val != "" {
			// A load only on a cluster named on the command line.
			v.notes = append(v.notes, fmt.Sprintf("%s (%s) ignored: %s; to judge that cluster instead, give it by name: --endpoints=%s",
				env, val, c.ignoreEnvEndpoints, strings.Join(strings.Fields(strings.ReplaceAll(val, ",", " ")), ",")))
			continue
		}
		if fl.Changed(name) {
			v.from[name] = "--" + name
			if val != "" {
				shadowed = append(shadowed, env)
			}
			continue
		}
		if val == "" {
			continue
		}
		if err := v.set(name, val); err != nil {
			if name == "user" { // never quoted: it may hold the password
				return nil, usageError("%s is not valid", env)
			}
			return nil, usageError("%s: %v", env, err)
		}
		v.from[name] = env
	}
	if len(shadowed) > 0 {
		v.notes = append(v.notes, strings.Join(shadowed, ", ")+" ignored: the flags given win")
	}
	if len(v.endpoints) == 0 && !c.endpointsFound {
		// No endpoints: the embedded etcd, which uses none of the TLS and
		// auth settings; those of the environment are ignored and said so.
		var unused []string
		for _, name := range []string{"cacert", "cert", "key", "insecure-skip-tls-verify", "user"} {
			if v.fromEnv(name) {
				unused = append(unused, envName(name))
				delete(v.from, name)
			}
		}
		v.cacert, v.cert, v.key, v.insecureSkip, v.user = c.cacert, c.cert, c.key, c.insecureSkip, c.user
		if len(unused) > 0 {
			why := " ignored: neither --endpoints nor " + endpointsEnv + " gives endpoints, so an embedded etcd is started"
			if c.ignoreEnvEndpoints != "" {
				why = " ignored: without --endpoints an embedded etcd is started"
			}
			v.notes = append(v.notes, strings.Join(unused, ", ")+why)
		}
	} else if v.fromEnv("endpoints") {
		note := "endpoints from " + endpointsEnv + ": " + strings.Join(v.endpoints, ",")
		var also []string
		for _, name := range connEnvFlags[1:] {
			if v.fromEnv(name) {
				also = append(also, envName(name))
			}
		}
		if len(also) > 0 {
			note += " (with " + strings.Join(also, ", ") + ")"
		}
		v.envEndpointsNote = len(v.notes)
		v.notes = append(v.notes, note)
	}
	return v, nil
}

// options returns the connection options, etcdctl's environment filling
// what the flags leave unset (resolve); the password is asked for here
// (never echoed) when --user has none and the environment neither.
func (c *connFlags) options(cmd *cobra.Command) (cluster.ConnOptions, error) {
	var o cluster.ConnOptions
	v, err := c.resolve(cmd)
	if err != nil {
		return o, err
	}
	o = cluster.ConnOptions{
		Endpoints: v.endpoints, CACert: v.cacert, Cert: v.cert, Key: v.key,
		InsecureSkipTLSVerify: v.insecureSkip, DialTimeout: v.dialTimeout, CommandTimeout: v.commandTimeout,
	}
	if v.fromEnv("endpoints") {
		o.EndpointsFrom = endpointsEnv
	}
	for _, name := range []string{"dial-timeout", "command-timeout"} {
		d := v.dialTimeout
		if name == "command-timeout" {
			d = v.commandTimeout
		}
		if d <= 0 {
			if v.fromEnv(name) {
				return o, usageError("%s must be positive, got %s", envName(name), d)
			}
			return o, usageError("--dial-timeout and --command-timeout must be positive")
		}
	}
	if len(v.endpoints) == 0 && !c.endpointsFound && (v.cacert != "" || v.cert != "" || v.key != "" || v.insecureSkip || v.user != "") {
		return o, usageError("--cacert, --cert, --key, --insecure-skip-tls-verify and --user need --endpoints or %s (the embedded etcd uses none of them)", endpointsEnv)
	}
	if (v.cert == "") != (v.key == "") && (len(v.endpoints) > 0 || c.endpointsFound) {
		return o, usageError("%s and %s go together: give both or neither", v.source("cert"), v.source("key"))
	}
	if v.user != "" {
		user, pass, hasPass := strings.Cut(v.user, ":")
		if user == "" {
			// Not quoted back: what follows the colon is the password.
			return o, usageError("%s has no user name before the colon: give user or user:password", v.source("user"))
		}
		o.User = user
		switch {
		case hasPass:
			o.Password = pass
		case os.Getenv(passwordEnv) != "":
			o.Password = os.Getenv(passwordEnv)
		case os.Getenv(etcdctlPasswordEnv) != "":
			o.Password = os.Getenv(etcdctlPasswordEnv)
		default:
			p, err := promptPassword(cmd.InOrStdin(), cmd.ErrOrStderr(), user)
			if err != nil {
				return o, err
			}
			o.Password = p
		}
	}
	if len(o.Endpoints) > 0 {
		if err := o.Validate(); err != nil {
			if v.fromEnv("endpoints") {
				return o, usageError("%s: %v", endpointsEnv, err)
			}
			return o, usageError("%v", err)
		}
	}
	c.notes, c.envEndpointsNote = v.notes, v.envEndpointsNote
	return o, nil
}

// announce says on stderr, once and unless --quiet, what came from
// etcdctl's environment: the endpoints of ETCDCTL_ENDPOINTS, and the
// variables ignored. Commands call it when every flag has been checked,
// just before the run.
func (c *connFlags) announce(cmd *cobra.Command) {
	if !quiet(cmd) {
		for _, n := range c.notes {
			fmt.Fprintf(cmd.ErrOrStderr(), "etcdperf: %s\n", n)
		}
	}
	c.notes = nil
}

// announceLoad is announce for a command about to load the cluster: when
// the endpoints came from ETCDCTL_ENDPOINTS (not named on the command
// line), their note says what load goes to them, before it starts.
func (c *connFlags) announceLoad(cmd *cobra.Command, load string) {
	if c.envEndpointsNote >= 0 && c.envEndpointsNote < len(c.notes) && load != "" {
		c.notes[c.envEndpointsNote] += "; loading them with " + load
	}
	c.announce(cmd)
}

// embeddedOnly is the usage error of a flag of the embedded etcd given
// while co has endpoints: from --endpoints, or from ETCDCTL_ENDPOINTS,
// which a control-plane node often exports (then the fix is to unset it).
func embeddedOnly(flag string, co cluster.ConnOptions) error {
	if co.EndpointsFrom != "" {
		return usageError("%s is for the embedded etcd, but %s gives endpoints (%s): unset it (env -u %s etcdperf ...) to start an embedded etcd, or drop %s",
			flag, co.EndpointsFrom, strings.Join(co.Endpoints, ","), co.EndpointsFrom, flag)
	}
	return usageError("%s is for the embedded etcd; it cannot be used with --endpoints", flag)
}

// promptPassword reads a password from the terminal without echoing it.
func promptPassword(in io.Reader, prompt io.Writer, user string) (string, error) {
	f, ok := in.(*os.File)
	if !ok || !isTerminal(f) {
		return "", usageError("--user %s needs a password: set %s (or %s), or run in a terminal to be asked", user, passwordEnv, etcdctlPasswordEnv)
	}
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", err
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", err
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	fmt.Fprintf(prompt, "Password for %s: ", user)
	line, err := bufio.NewReader(f).ReadString('\n')
	fmt.Fprintln(prompt)
	if err != nil && line == "" {
		return "", fmt.Errorf("read the password: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}
