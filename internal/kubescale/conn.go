package kubescale

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/etcdperf/etcdperf/internal/version"
)

// Conn is how a run reaches the API server: a kubeconfig (its current
// context, or Context), or a URL with a bearer token; Server overrides
// the kubeconfig's.
type Conn struct {
	Kubeconfig, Context string
	Server, Token       string
	// CAFile verifies the server's certificate; Insecure skips that.
	CAFile   string
	Insecure bool
}

// Given reports whether the API server was named at all.
func (c Conn) Given() bool { return c.Kubeconfig != "" || c.Server != "" }

func (c Conn) validate() error {
	switch {
	case !c.Given():
		return errors.New("name the API server with --kubeconfig or --server")
	case c.Kubeconfig == "" && c.Token == "":
		return errors.New("--server needs --token (or use --kubeconfig)")
	case c.Kubeconfig == "" && c.Context != "":
		return errors.New("--context needs --kubeconfig")
	}
	if c.Kubeconfig != "" {
		if _, err := os.Stat(c.Kubeconfig); err != nil {
			return fmt.Errorf("--kubeconfig: %w", err)
		}
	}
	if c.CAFile != "" {
		if _, err := os.Stat(c.CAFile); err != nil {
			return fmt.Errorf("--certificate-authority: %w", err)
		}
	}
	return nil
}

// restConfig builds client-go's configuration. Its own rate limiter lets
// every call through: the run waits for its limiter (qps, burst) before it
// starts a call's clock, so that a call's latency is the API server's, not
// the time it queued in the client.
func (c Conn) restConfig(o *Options) (*rest.Config, error) {
	var cfg *rest.Config
	if c.Kubeconfig != "" {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig}
		over := &clientcmd.ConfigOverrides{CurrentContext: c.Context}
		if c.Server != "" {
			over.ClusterInfo.Server = c.Server
		}
		var err error
		if cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, over).ClientConfig(); err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", c.Kubeconfig, err)
		}
	} else {
		cfg = &rest.Config{Host: c.Server, BearerToken: c.Token}
	}
	if c.Token != "" {
		cfg.BearerToken, cfg.BearerTokenFile = c.Token, ""
	}
	if c.CAFile != "" {
		cfg.CAFile, cfg.CAData = c.CAFile, nil
	}
	if c.Insecure {
		cfg.Insecure, cfg.CAFile, cfg.CAData = true, "", nil
	}
	cfg.UserAgent = "etcdperf/" + version.String()
	// As Kubernetes' own components talk to the API server.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = float32(o.QPS), o.Burst
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.Timeout = o.CallTimeout
	return cfg, nil
}
