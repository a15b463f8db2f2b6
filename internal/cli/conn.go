package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/internal/cluster"
)

// passwordEnv holds the password of --user when it is not typed.
const passwordEnv = "ETCDPERF_PASSWORD"

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
}

// addConnFlags defines etcdctl's connection flags on cmd.
func addConnFlags(cmd *cobra.Command) *connFlags {
	c := &connFlags{}
	fl := cmd.Flags()
	fl.StringSliceVar(&c.endpoints, "endpoints", nil, "etcd client endpoints (host:port or http(s)://host:port, comma-separated); none: start an embedded etcd")
	fl.StringVar(&c.cacert, "cacert", "", "verify the servers' certificates with this CA bundle")
	fl.StringVar(&c.cert, "cert", "", "client certificate for TLS")
	fl.StringVar(&c.key, "key", "", "client key for TLS")
	fl.BoolVar(&c.insecureSkip, "insecure-skip-tls-verify", false, "accept any server certificate (testing only)")
	fl.StringVar(&c.user, "user", "", "user[:password] for etcd's auth; the password comes from "+passwordEnv+" or a prompt when not given")
	fl.DurationVar(&c.dialTimeout, "dial-timeout", cluster.DefaultDialTimeout, "give up connecting to an endpoint after this long")
	fl.DurationVar(&c.commandTimeout, "command-timeout", cluster.DefaultCommandTimeout, "give up on one request after this long (it counts as an error)")
	return c
}

// options returns the connection options; the password is asked for here
// (never echoed) when --user has none and the environment neither.
func (c *connFlags) options(cmd *cobra.Command) (cluster.ConnOptions, error) {
	o := cluster.ConnOptions{
		Endpoints: c.endpoints, CACert: c.cacert, Cert: c.cert, Key: c.key,
		InsecureSkipTLSVerify: c.insecureSkip, DialTimeout: c.dialTimeout, CommandTimeout: c.commandTimeout,
	}
	if c.dialTimeout <= 0 || c.commandTimeout <= 0 {
		return o, usageError("--dial-timeout and --command-timeout must be positive")
	}
	if len(c.endpoints) == 0 && (c.cacert != "" || c.cert != "" || c.key != "" || c.insecureSkip || c.user != "") {
		return o, usageError("--cacert, --cert, --key, --insecure-skip-tls-verify and --user need --endpoints (the embedded etcd uses none of them)")
	}
	if c.user != "" {
		user, pass, hasPass := strings.Cut(c.user, ":")
		if user == "" {
			// Not quoted back: what follows the colon is the password.
			return o, usageError("--user has no user name before the colon: give user or user:password")
		}
		o.User = user
		switch {
		case hasPass:
			o.Password = pass
		case os.Getenv(passwordEnv) != "":
			o.Password = os.Getenv(passwordEnv)
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
			return o, usageError("%v", err)
		}
	}
	return o, nil
}

// promptPassword reads a password from the terminal without echoing it.
func promptPassword(in io.Reader, prompt io.Writer, user string) (string, error) {
	f, ok := in.(*os.File)
	if !ok || !isTerminal(f) {
		return "", usageError("--user %s needs a password: set %s, or run in a terminal to be asked", user, passwordEnv)
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
