package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Reason classifies why an endpoint could not be used.
type Reason string

// The reasons a connection fails, each with its own advice.
const (
	Unreachable    Reason = "unreachable"     // nothing listens, no route, DNS
	Timeout        Reason = "timeout"         // no answer within the dial timeout
	TLSMismatch    Reason = "tls-mismatch"    // one side speaks TLS, the other not
	BadServerCert  Reason = "bad-server-cert" // the server's certificate is not trusted
	BadClientCert  Reason = "bad-client-cert" // the server rejected our certificate
	AuthFailed     Reason = "auth-failed"     // wrong user or password
	AuthRequired   Reason = "auth-required"   // auth is enabled and no user was given
	NotEtcd        Reason = "not-etcd"        // something else answers there
	RequestFailure Reason = "request-failed"  // etcd answered with an error
)

// ConnError tells which endpoint failed, why, and what to do.
type ConnError struct {
	Endpoint string
	Reason   Reason
	Err      error
	Hint     string
}

func (e *ConnError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "etcd at %s: ", e.Endpoint)
	switch e.Reason {
	case Unreachable:
		b.WriteString("unreachable")
	case Timeout:
		b.WriteString("no answer in time")
	case TLSMismatch:
		b.WriteString("TLS mismatch")
	case BadServerCert:
		b.WriteString("server certificate not trusted")
	case BadClientCert:
		b.WriteString("client certificate rejected")
	case AuthFailed:
		b.WriteString("authentication failed")
	case AuthRequired:
		b.WriteString("authentication required")
	case NotEtcd:
		b.WriteString("not an etcd client endpoint")
	default:
		b.WriteString("request failed")
	}
	if e.Err != nil {
		fmt.Fprintf(&b, " (%v)", e.Err)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *ConnError) Unwrap() error { return e.Err }

// classifyNet explains a failed TCP dial.
func classifyNet(ep string, err error, o ConnOptions) *ConnError {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &ConnError{Endpoint: ep, Reason: Timeout, Err: fmt.Errorf("no TCP connection within --dial-timeout %s", o.dialTimeout()),
			Hint: "check the address in --endpoints and any firewall between here and etcd"}
	}
	hint := "check --endpoints and that etcd is running and listening there"
	if errors.Is(err, syscall.ECONNREFUSED) {
		err = errors.New("connection refused")
	}
	return &ConnError{Endpoint: ep, Reason: Unreachable, Err: err, Hint: hint}
}

// classifyTLS explains a failed TLS handshake.
func classifyTLS(ep string, err error, o ConnOptions) *ConnError {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	var ae tls.AlertError
	var ve *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ua):
		hint := "pass the CA that signed etcd's server certificate with --cacert"
		if o.CACert != "" {
			hint = fmt.Sprintf("--cacert %s did not sign etcd's server certificate: use etcd's --trusted-ca-file", o.CACert)
		}
		return &ConnError{Endpoint: ep, Reason: BadServerCert, Err: errors.New("certificate signed by an unknown authority"), Hint: hint}
	case errors.As(err, &he):
		return &ConnError{Endpoint: ep, Reason: BadServerCert, Err: he,
			Hint: "connect by a name or IP listed in etcd's server certificate, or use --insecure-skip-tls-verify to test"}
	case errors.As(err, &ci):
		return &ConnError{Endpoint: ep, Reason: BadServerCert, Err: ci, Hint: "renew etcd's server certificate"}
	case errors.As(err, &rh), errors.Is(err, io.EOF):
		return &ConnError{Endpoint: ep, Reason: TLSMismatch, Err: errors.New("the server does not speak TLS"),
			Hint: "use http://" + trimScheme(ep) + " and drop --cacert/--cert/--key"}
	case errors.As(err, &ae), strings.Contains(err.Error(), "remote error: tls:"):
		return &ConnError{Endpoint: ep, Reason: BadClientCert, Err: err, Hint: clientCertHint(o)}
	case errors.As(err, &ve):
		return &ConnError{Endpoint: ep, Reason: BadServerCert, Err: ve.Err, Hint: "check --cacert"}
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &ConnError{Endpoint: ep, Reason: Timeout, Err: fmt.Errorf("no TLS handshake within --dial-timeout %s", o.dialTimeout()),
			Hint: "is this etcd's client port?"}
	}
	return &ConnError{Endpoint: ep, Reason: TLSMismatch, Err: err, Hint: "check the TLS flags against etcd's client TLS settings"}
}

func clientCertHint(o ConnOptions) string {
	if o.Cert == "" {
		return "etcd requires a client certificate (--client-cert-auth): pass --cert and --key"
	}
	return fmt.Sprintf("etcd does not accept --cert %s: it must be signed by etcd's --trusted-ca-file", o.Cert)
}

// classifyRPC explains an error from a first request once the transport
// worked.
func classifyRPC(ep string, err error, o ConnOptions) *ConnError {
	switch {
	case errors.Is(err, rpctypes.ErrAuthFailed) || rpctypes.ErrorDesc(err) == rpctypes.ErrorDesc(rpctypes.ErrGRPCAuthFailed):
		return &ConnError{Endpoint: ep, Reason: AuthFailed, Err: fmt.Errorf("wrong user or password for %q", o.User),
			Hint: "check --user and the password (ETCDPERF_PASSWORD, ETCDCTL_PASSWORD or the prompt)"}
	case rpctypes.ErrorDesc(err) == rpctypes.ErrorDesc(rpctypes.ErrGRPCUserEmpty) || status.Code(err) == codes.PermissionDenied && o.User == "":
		return &ConnError{Endpoint: ep, Reason: AuthRequired, Err: err, Hint: "etcd has auth enabled: pass --user (password from ETCDPERF_PASSWORD, ETCDCTL_PASSWORD or the prompt)"}
	case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
		return &ConnError{Endpoint: ep, Reason: Timeout, Err: fmt.Errorf("no etcd answer within --dial-timeout %s", o.dialTimeout()),
			Hint: "is this etcd's client port (2379), and is etcd healthy?"}
	case status.Code(err) == codes.Unavailable:
		msg := status.Convert(err).Message()
		if strings.Contains(msg, "server preface") || strings.Contains(msg, "http2") || strings.Contains(msg, "EOF") {
			return &ConnError{Endpoint: ep, Reason: NotEtcd, Err: errors.New(msg),
				Hint: "something answers there but not etcd's gRPC: check the port, or whether it needs https:// and --cacert"}
		}
		return &ConnError{Endpoint: ep, Reason: Unreachable, Err: errors.New(msg), Hint: "check --endpoints and that etcd is running"}
	}
	return &ConnError{Endpoint: ep, Reason: RequestFailure, Err: err}
}

func trimScheme(ep string) string {
	if _, rest, ok := strings.Cut(ep, "://"); ok {
		return rest
	}
	return ep
}
