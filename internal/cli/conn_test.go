package cli

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/cluster"
	"github.com/etcdperf/etcdperf/internal/lab"
)

// cleanEnv unsets every ETCDCTL_ variable and the password of etcdperf for
// the test, so that the developer's environment does not leak in.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "ETCDCTL_") {
			t.Setenv(name, "")
		}
	}
	t.Setenv(passwordEnv, "")
}

// connCmd is a command with the connection and member flags, parsed from
// args; stdin is not a terminal, so a missing password is an error.
func connCmd(t *testing.T, args ...string) (*cobra.Command, *connFlags, *memberFlags, *bytes.Buffer) {
	t.Helper()
	cmd := &cobra.Command{Use: "x"}
	c := addConnFlags(cmd)
	mf := addMemberFlags(cmd)
	var stderr bytes.Buffer
	cmd.SetErr(&stderr)
	cmd.SetIn(strings.NewReader(""))
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return cmd, c, mf, &stderr
}

// usage asserts that err is a usage error (exit 2) that contains want.
func usage(t *testing.T, err error, want string) {
	t.Helper()
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != ExitError {
		t.Fatalf("want a usage error with %q, got %v", want, err)
	}
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q: want one line with %q", err, want)
	}
}

// Every connection setting of etcdctl's environment reaches the options,
// and the run says on stderr where the endpoints came from.
func TestConnEnvFillsEveryOption(t *testing.T) {
	cleanEnv(t)
	t.Setenv("ETCDCTL_API", "3") // etcdctl's own switch: ignored
	t.Setenv("ETCDCTL_ENDPOINTS", "https://10.0.0.1:2379, 10.0.0.2:2379")
	t.Setenv("ETCDCTL_CACERT", "/etc/etcd/ca.pem")
	t.Setenv("ETCDCTL_CERT", "/etc/etcd/client.pem")
	t.Setenv("ETCDCTL_KEY", "/etc/etcd/client-key.pem")
	t.Setenv("ETCDCTL_INSECURE_SKIP_TLS_VERIFY", "true")
	t.Setenv("ETCDCTL_USER", "root")
	t.Setenv("ETCDCTL_PASSWORD", "s3cret")
	t.Setenv("ETCDCTL_DIAL_TIMEOUT", "5s")
	t.Setenv("ETCDCTL_COMMAND_TIMEOUT", "1m30s")
	cmd, c, _, stderr := connCmd(t)
	o, err := c.options(cmd)
	if err != nil {
		t.Fatal(err)
	}
	want := cluster.ConnOptions{
		Endpoints: []string{"https://10.0.0.1:2379", "10.0.0.2:2379"}, CACert: "/etc/etcd/ca.pem",
		Cert: "/etc/etcd/client.pem", Key: "/etc/etcd/client-key.pem", InsecureSkipTLSVerify: true,
		User: "root", Password: "s3cret", DialTimeout: 5 * time.Second, CommandTimeout: 90 * time.Second,
		EndpointsFrom: "ETCDCTL_ENDPOINTS",
	}
	if !slices.Equal(o.Endpoints, want.Endpoints) {
		t.Errorf("endpoints %q, want %q", o.Endpoints, want.Endpoints)
	}
	o.Endpoints, want.Endpoints = nil, nil
	if !reflect.DeepEqual(o, want) {
		t.Errorf("options\n got %+v\nwant %+v", o, want)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr before announce: %q", stderr)
	}
	c.announce(cmd)
	c.announce(cmd) // once only
	got := stderr.String()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "endpoints from ETCDCTL_ENDPOINTS: https://10.0.0.1:2379,10.0.0.2:2379") ||
		!strings.Contains(got, "ETCDCTL_CACERT") || strings.Contains(got, "s3cret") || strings.Contains(got, "ETCDCTL_API") {
		t.Errorf("stderr %q", got)
	}
}

// A flag wins over its variable, setting by setting, and the run says
// which variables it ignored.
func TestConnFlagsWinOverEnv(t *testing.T) {
	cleanEnv(t)
	t.Setenv("ETCDCTL_ENDPOINTS", "10.0.0.1:2379")
	t.Setenv("ETCDCTL_DIAL_TIMEOUT", "9s")
	t.Setenv("ETCDCTL_COMMAND_TIMEOUT", "7s")
	cmd, c, _, stderr := connCmd(t, "--endpoints", "127.0.0.1:2379", "--dial-timeout", "1s")
	o, err := c.options(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Endpoints, []string{"127.0.0.1:2379"}) || o.EndpointsFrom != "" || o.DialTimeout != time.Second || o.CommandTimeout != 7*time.Second {
		t.Errorf("options %+v: want the flags' endpoints and dial timeout, the environment's command timeout", o)
	}
	c.announce(cmd)
	if got := stderr.String(); got != "etcdperf: ETCDCTL_ENDPOINTS, ETCDCTL_DIAL_TIMEOUT ignored: the flags given win\n" {
		t.Errorf("stderr %q", got)
	}
}

// Without endpoints from a flag or ETCDCTL_ENDPOINTS the embedded etcd
// runs: TLS and auth variables (exported on control-plane nodes) are
// ignored and said so, never an error; the timeouts still apply.
func TestConnEnvWithoutEndpoints(t *testing.T) {
	cleanEnv(t)
	t.Setenv("ETCDCTL_CACERT", "/etc/kubernetes/pki/etcd/ca.crt")
	t.Setenv("ETCDCTL_USER", "root")
	t.Setenv("ETCDCTL_DIAL_TIMEOUT", "4s")
	cmd, c, _, stderr := connCmd(t)
	o, err := c.options(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Endpoints) != 0 || o.CACert != "" || o.User != "" || o.DialTimeout != 4*time.Second {
		t.Errorf("options %+v", o)
	}
	c.announce(cmd)
	if got := stderr.String(); !strings.Contains(got, "ETCDCTL_CACERT, ETCDCTL_USER ignored") || !strings.Contains(got, "embedded etcd") {
		t.Errorf("stderr %q", got)
	}
	// --quiet silences the notes.
	cmd, c, _, stderr = connCmd(t)
	cmd.Flags().Bool("quiet", true, "")
	if _, err := c.options(cmd); err != nil {
		t.Fatal(err)
	}
	c.announce(cmd)
	if stderr.Len() != 0 {
		t.Errorf("--quiet: stderr %q", stderr)
	}
}

// A bad value in the environment is a usage error naming the variable.
func TestConnEnvBadValues(t *testing.T) {
	cases := []struct {
		env, val, want string
	}{
		{"ETCDCTL_DIAL_TIMEOUT", "abc", `ETCDCTL_DIAL_TIMEOUT: "abc" is not a duration`},
		{"ETCDCTL_DIAL_TIMEOUT", "5", `ETCDCTL_DIAL_TIMEOUT: "5" is not a duration`},
		{"ETCDCTL_COMMAND_TIMEOUT", "0s", "ETCDCTL_COMMAND_TIMEOUT must be positive"},
		{"ETCDCTL_COMMAND_TIMEOUT", "-1s", "ETCDCTL_COMMAND_TIMEOUT must be positive"},
		{"ETCDCTL_INSECURE_SKIP_TLS_VERIFY", "maybe", `ETCDCTL_INSECURE_SKIP_TLS_VERIFY: "maybe" is not true or false`},
		{"ETCDCTL_ENDPOINTS", " , ", "ETCDCTL_ENDPOINTS: no endpoint"},
		{"ETCDCTL_ENDPOINTS", "ftp://10.0.0.1:2379", `ETCDCTL_ENDPOINTS: endpoint "ftp://10.0.0.1:2379": scheme "ftp"`},
		{"ETCDCTL_ENDPOINTS", "10.0.0.1", "ETCDCTL_ENDPOINTS: endpoint"},
	}
	for _, c := range cases {
		t.Run(c.env+"="+c.val, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv(c.env, c.val)
			cmd, cf, _, _ := connCmd(t)
			_, err := cf.options(cmd)
			usage(t, err, c.want)
		})
	}
	// A user without a name is refused without quoting the password.
	cleanEnv(t)
	t.Setenv("ETCDCTL_ENDPOINTS", "127.0.0.1:2379")
	t.Setenv("ETCDCTL_USER", ":hunter2")
	cmd, cf, _, _ := connCmd(t)
	_, err := cf.options(cmd)
	usage(t, err, "ETCDCTL_USER has no user name")
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the password is in %q", err)
	}
	// A certificate without its key names where each came from.
	cleanEnv(t)
	t.Setenv("ETCDCTL_ENDPOINTS", "127.0.0.1:2379")
	t.Setenv("ETCDCTL_CERT", "c.pem")
	cmd, cf, _, _ = connCmd(t)
	_, err = cf.options(cmd)
	usage(t, err, "ETCDCTL_CERT and --key go together")
}

// The password of a user without one: user:password, then
// ETCDPERF_PASSWORD, then ETCDCTL_PASSWORD; none and no terminal is an
// error that names both variables.
func TestConnEnvPassword(t *testing.T) {
	cases := []struct {
		user, etcdperf, etcdctl, want string
	}{
		{"u:typed", "perf", "ctl", "typed"},
		{"u", "perf", "ctl", "perf"},
		{"u", "", "ctl", "ctl"},
	}
	for _, c := range cases {
		cleanEnv(t)
		t.Setenv(passwordEnv, c.etcdperf)
		t.Setenv("ETCDCTL_PASSWORD", c.etcdctl)
		cmd, cf, _, _ := connCmd(t, "--endpoints", "127.0.0.1:2379", "--user", c.user)
		o, err := cf.options(cmd)
		if err != nil || o.User != "u" || o.Password != c.want {
			t.Errorf("%+v: user %q password %q, err %v; want %q", c, o.User, o.Password, err, c.want)
		}
	}
	cleanEnv(t)
	t.Setenv("ETCDCTL_ENDPOINTS", "127.0.0.1:2379")
	t.Setenv("ETCDCTL_USER", "u")
	cmd, cf, _, _ := connCmd(t)
	_, err := cf.options(cmd)
	usage(t, err, "ETCDPERF_PASSWORD (or ETCDCTL_PASSWORD)")
}

// --members and --fault are the embedded etcd's: with endpoints from
// ETCDCTL_ENDPOINTS they are refused with the way out, not dropped.
func TestConnEnvRefusesEmbeddedFlags(t *testing.T) {
	cleanEnv(t)
	t.Setenv("ETCDCTL_ENDPOINTS", "10.0.0.1:2379")
	for _, args := range [][]string{{"--members", "3"}, {"--fault", "1:cpu-limit=0.1"}} {
		cmd, c, mf, _ := connCmd(t, args...)
		o, err := c.options(cmd)
		if err != nil {
			t.Fatal(err)
		}
		var target lab.TargetOptions
		err = mf.options(cmd, o, &target)
		usage(t, err, args[0]+" is for the embedded etcd, but ETCDCTL_ENDPOINTS gives endpoints (10.0.0.1:2379): unset it")
	}
	// With --endpoints the message stays the flag's.
	cleanEnv(t)
	cmd, c, mf, _ := connCmd(t, "--endpoints", "10.0.0.1:2379", "--members", "3")
	o, err := c.options(cmd)
	if err != nil {
		t.Fatal(err)
	}
	var target lab.TargetOptions
	usage(t, mf.options(cmd, o, &target), "--members is for the embedded etcd; it cannot be used with --endpoints")
	// No endpoints anywhere: the embedded cluster of --members.
	cleanEnv(t)
	cmd, c, mf, _ = connCmd(t, "--members", "3")
	if o, err = c.options(cmd); err != nil {
		t.Fatal(err)
	}
	if err := mf.options(cmd, o, &target); err != nil || target.Members != 3 {
		t.Errorf("members %d, err %v", target.Members, err)
	}
}
