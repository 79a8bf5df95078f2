package dist

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/tierflow/tierflow/internal/inputerr"
)

// KeyPrefix is where every run keeps its keys (/tierflow/HASH/TIME/…):
// a cluster with authentication gives the run's user a role that may
// read and write it.
const KeyPrefix = "/tierflow/"

// ErrAuth is an etcd that refused the credentials: an unknown user, a
// wrong password, or a user without the rights on the run's prefix.
var ErrAuth = errors.New("etcd refused the credentials")

// EtcdClient is how to reach an etcd cluster as its own clients do: its
// endpoints, TLS (a CA to verify the members, a client certificate and
// key for clusters that ask for one) and a user and password for
// clusters with authentication enabled. The zero value of each part
// leaves it out.
type EtcdClient struct {
	Endpoints []string
	// CACert, Cert and Key are PEM files: the CA that signed the
	// members' certificates ("" with https endpoints: the system's
	// roots), this client's certificate and its key.
	CACert, Cert, Key string
	// User and Password authenticate to a cluster with auth enabled.
	User, Password string
}

// TLS reports whether the client speaks TLS: https endpoints or any
// certificate given.
func (c EtcdClient) TLS() bool {
	if c.CACert != "" || c.Cert != "" || c.Key != "" {
		return true
	}
	for _, e := range c.Endpoints {
		if strings.HasPrefix(e, "https://") {
			return true
		}
	}
	return false
}

// Check refuses a client that cannot work whatever the cluster says:
// endpoints that are not URLs or mix http and https, TLS files with http
// endpoints, a certificate without its key, a password without a user.
func (c EtcdClient) Check() error {
	if len(c.Endpoints) == 0 {
		return errors.New("etcd: no endpoint")
	}
	schemes := map[string]bool{}
	for _, e := range c.Endpoints {
		if !strings.Contains(e, "://") { // HOST:PORT, as etcdctl takes it
			if _, _, err := net.SplitHostPort(e); err != nil {
				return fmt.Errorf("etcd endpoint %q: want HOST:PORT, http://HOST:PORT or https://HOST:PORT", e)
			}
			continue
		}
		u, err := url.Parse(e)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("etcd endpoint %q: want HOST:PORT, http://HOST:PORT or https://HOST:PORT", e)
		}
		schemes[u.Scheme] = true
	}
	if len(schemes) > 1 {
		return fmt.Errorf("etcd endpoints %s: all http or all https", strings.Join(c.Endpoints, ","))
	}
	if (c.CACert != "" || c.Cert != "") && schemes["http"] {
		return fmt.Errorf("etcd endpoints %s: certificates given, but the endpoints are http:// (TLS needs https://)", strings.Join(c.Endpoints, ","))
	}
	if (c.Cert == "") != (c.Key == "") {
		return errors.New("etcd client certificate: a certificate and its key go together")
	}
	if c.User == "" && c.Password != "" {
		return errors.New("etcd password: given without a user")
	}
	if c.User != "" && c.Password == "" {
		return fmt.Errorf("etcd user %s: no password", c.User)
	}
	return nil
}

// tlsConfig is the client's TLS configuration (nil: plain http).
func (c EtcdClient) tlsConfig() (*tls.Config, error) {
	if !c.TLS() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CACert != "" {
		pem, err := os.ReadFile(c.CACert)
		if err != nil {
			return nil, fmt.Errorf("etcd CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd CA certificate %s: no PEM certificate in it", c.CACert)
		}
		cfg.RootCAs = pool
	}
	if c.Cert != "" {
		kp, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("etcd client certificate %s, key %s: %w", c.Cert, c.Key, err)
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	return cfg, nil
}

// Connect opens a client of the cluster; it fails when no endpoint
// answers within timeout (ErrUnreachable, with the TLS handshake's
// reason where that is what failed) or the cluster refuses the
// credentials (ErrAuth).
func (c EtcdClient) Connect(timeout time.Duration) (*clientv3.Client, error) {
	eps := strings.Join(c.Endpoints, ",")
	if err := c.Check(); err != nil {
		return nil, inputerr.Errorf("%w", err)
	}
	tc, err := c.tlsConfig()
	if err != nil {
		return nil, inputerr.Errorf("%w", err)
	}
	// Reconnect within a couple of seconds of etcd coming back, not
	// grpc's default of up to two minutes.
	reconnect := grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second}, MinConnectTimeout: time.Second})
	// The relation state is read in one range read of all its chunks
	// (11.9 MB for Freebase86m in ComplEx at d=100): the response may be
	// as large as etcd sends (math.MaxInt32, as the client's default); a
	// request stays under the server's 1.5 MiB (RelationChunk).
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints, DialTimeout: timeout, TLS: tc, Username: c.User, Password: c.Password,
		MaxCallRecvMsgSize: math.MaxInt32, Logger: nopLogger(), DialOptions: []grpc.DialOption{reconnect}})
	if err == nil {
		err = c.status(cli, timeout)
		if err != nil {
			cli.Close()
		}
	}
	if err == nil {
		return cli, nil
	}
	if errors.Is(err, rpctypes.ErrAuthFailed) || errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrUserEmpty) {
		return nil, fmt.Errorf("etcd %s: %w (%s): %w", eps, ErrAuth, c.who(), err)
	}
	if tc != nil {
		// grpc waits out a failed handshake as an endpoint down; say why.
		if herr := c.handshake(tc, timeout); herr != nil {
			return nil, fmt.Errorf("etcd %s: %w: TLS: %w", eps, ErrUnreachable, herr)
		}
	}
	return nil, fmt.Errorf("etcd %s: %w: %w", eps, ErrUnreachable, err)
}

// status asks the endpoints in turn for their status: one answering is
// enough (a cluster with a member down still serves).
func (c EtcdClient) status(cli *clientv3.Client, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var errs []error
	for _, e := range c.Endpoints {
		octx, ocancel := context.WithTimeout(ctx, max(timeout/time.Duration(len(c.Endpoints)), time.Second))
		_, err := cli.Status(octx, e)
		ocancel()
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errs[0]
}

// handshake dials the endpoints with tc and returns the first TLS
// handshake's error, nil if one succeeds or none could be reached.
func (c EtcdClient) handshake(tc *tls.Config, timeout time.Duration) error {
	var first error
	for _, e := range c.Endpoints {
		host := e
		if u, err := url.Parse(e); err == nil && u.Host != "" {
			host = u.Host
		}
		h, _, err := net.SplitHostPort(host)
		if err != nil {
			continue
		}
		cfg := tc.Clone()
		cfg.ServerName = h
		d := &net.Dialer{Timeout: timeout}
		conn, err := tls.DialWithDialer(d, "tcp", host, cfg)
		if err == nil {
			// TLS 1.3: a member that wants a client certificate says
			// so after the handshake; one that is content waits for
			// the client to speak.
			conn.SetReadDeadline(time.Now().Add(time.Second))
			_, err = conn.Read(make([]byte, 1))
			conn.Close()
			var ne net.Error
			if err == nil || errors.As(err, &ne) && ne.Timeout() {
				return nil
			}
		}
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			continue // not reached: not a TLS failure
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// CheckAccess checks that the client may read and write under KeyPrefix,
// as a run's launcher and trainers do, with a key written and deleted.
func CheckAccess(ctx context.Context, cli *clientv3.Client, c EtcdClient) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b := make([]byte, 8)
	rand.Read(b)
	k := fmt.Sprintf("%saccess-%x", KeyPrefix, b)
	_, err := cli.Put(ctx, k, "")
	if err == nil {
		_, err = cli.Delete(ctx, k)
	}
	if errors.Is(err, rpctypes.ErrPermissionDenied) {
		return fmt.Errorf("etcd %s: %w (%s may not read and write %s; an administrator grants it with etcdctl role grant-permission ROLE --prefix=true readwrite %s): %w",
			strings.Join(c.Endpoints, ","), ErrAuth, c.who(), KeyPrefix, KeyPrefix, err)
	}
	if err != nil {
		return fmt.Errorf("etcd %s: %w", strings.Join(c.Endpoints, ","), err)
	}
	return nil
}

// who names the etcd user the client is.
func (c EtcdClient) who() string {
	switch {
	case c.User != "":
		return "user " + c.User
	case c.Cert != "":
		return "the user of the client certificate's common name"
	}
	return "no user"
}
