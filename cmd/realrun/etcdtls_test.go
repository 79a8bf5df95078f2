//go:build !nodist

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/tierflow/tierflow/cmd/internal/distargs"
	"github.com/tierflow/tierflow/realrun/dist"
)

// pki is a CA of the test's own and a certificate it signed.
type pki struct {
	ca   *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
	CA   string // the CA's certificate, PEM
	name string
}

func newCA(t *testing.T, dir, name string) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	p := &pki{ca: ca, key: key, dir: dir, name: name, CA: filepath.Join(dir, name+"-ca.pem")}
	writePEM(t, p.CA, "CERTIFICATE", der)
	return p
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
}

// issue signs a certificate for cn (a server's for 127.0.0.1, or a
// client's) and returns its certificate and key files.
func (p *pki) issue(t *testing.T, cn string, server bool) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.key)
	require.NoError(t, err)
	kd, err := x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	cert, key = filepath.Join(p.dir, p.name+"-"+cn+".pem"), filepath.Join(p.dir, p.name+"-"+cn+"-key.pem")
	writePEM(t, cert, "CERTIFICATE", der)
	writePEM(t, key, "EC PRIVATE KEY", kd)
	return cert, key
}

func secret(t *testing.T) string {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// secureEtcd starts an etcd member that serves clients over TLS with a
// certificate of ca's, asks them for a certificate of ca's too, and has
// authentication on: a root user, and a user "trainer" whose role may
// read and write /tierflow/ only, and a user "other" whose role may
// read and write /other/ only. It returns the endpoint and the users'
// passwords.
func secureEtcd(t *testing.T, ca *pki) (endpoint, password, otherPassword string) {
	t.Helper()
	dir := t.TempDir()
	cert, key := ca.issue(t, "etcd", true)
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "secure", filepath.Join(dir, "data")
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	cu := url.URL{Scheme: "https", Host: fmt.Sprintf("127.0.0.1:%d", port())}
	pu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", port())}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.ClientTLSInfo = transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: ca.CA, ClientCertAuth: true}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		t.Fatal("etcd not ready after 60 s")
	}
	// The administrator's part, as etcdctl user add / role add /
	// role grant-permission --prefix / auth enable do it.
	ccert, ckey := ca.issue(t, "admin", false)
	cli, err := dist.EtcdClient{Endpoints: []string{cu.String()}, CACert: ca.CA, Cert: ccert, Key: ckey}.Connect(10 * time.Second)
	require.NoError(t, err)
	defer cli.Close()
	ctx := context.Background()
	password = secret(t)
	_, err = cli.RoleAdd(ctx, "root")
	require.NoError(t, err)
	_, err = cli.UserAdd(ctx, "root", secret(t))
	require.NoError(t, err)
	_, err = cli.UserGrantRole(ctx, "root", "root")
	require.NoError(t, err)
	_, err = cli.RoleAdd(ctx, "tierflow")
	require.NoError(t, err)
	_, err = cli.RoleGrantPermission(ctx, "tierflow", "/tierflow/", clientv3.GetPrefixRangeEnd("/tierflow/"), clientv3.PermissionType(clientv3.PermReadWrite))
	require.NoError(t, err)
	_, err = cli.UserAdd(ctx, "trainer", password)
	require.NoError(t, err)
	_, err = cli.UserGrantRole(ctx, "trainer", "tierflow")
	require.NoError(t, err)
	otherPassword = secret(t)
	_, err = cli.RoleAdd(ctx, "other")
	require.NoError(t, err)
	_, err = cli.RoleGrantPermission(ctx, "other", "/other/", clientv3.GetPrefixRangeEnd("/other/"), clientv3.PermissionType(clientv3.PermReadWrite))
	require.NoError(t, err)
	_, err = cli.UserAdd(ctx, "other", otherPassword)
	require.NoError(t, err)
	_, err = cli.UserGrantRole(ctx, "other", "other")
	require.NoError(t, err)
	_, err = cli.AuthEnable(ctx)
	require.NoError(t, err)
	return cu.String(), password, otherPassword
}

// A run against an existing cluster with TLS (a client certificate
// too) and authentication: the right credentials train, the wrong
// password or CA is one clear line and exit 2, before the work
// directory is made.
func TestEtcdTLSAuth(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, dir, "good")
	other := newCA(t, dir, "other")
	ep, pw, otherPW := secureEtcd(t, ca)
	cert, key := ca.issue(t, "tierflow", false)
	pwFile := filepath.Join(dir, "pw")
	require.NoError(t, os.WriteFile(pwFile, []byte(pw+"\n"), 0o600))
	tls := []string{"--etcd", ep, "--etcd-cacert", ca.CA, "--etcd-cert", cert, "--etcd-key", key}
	train := []string{"--trainers", "2", "--dataset", "twitter", "--scale", "0.0005", "--p", "4", "--dim", "16", "--epochs", "1", "--eval", "none"}
	for _, tc := range []struct {
		name string
		args []string
		env  string // $TIERFLOW_ETCD_PASSWORD
		want string // "": the run succeeds
	}{
		{"password in the environment", append(append([]string{}, tls...), "--etcd-user", "trainer"), pw, ""},
		{"password on the command line", append(append([]string{}, tls...), "--etcd-user", "trainer:"+pw), "", ""},
		{"password from a file", append(append([]string{}, tls...), "--etcd-user", "trainer", "--etcd-password-file", pwFile), "", ""},
		{"wrong password", append(append([]string{}, tls...), "--etcd-user", "trainer"), "not-" + pw, "etcd refused the credentials (user trainer)"},
		{"wrong user:password", append(append([]string{}, tls...), "--etcd-user", "trainer:wrong"), "", "etcd refused the credentials"},
		{"no password", append(append([]string{}, tls...), "--etcd-user", "trainer"), "", "--etcd-user trainer: no password"},
		{"wrong CA", []string{"--etcd", ep, "--etcd-cacert", other.CA, "--etcd-cert", cert, "--etcd-key", key, "--etcd-user", "trainer"}, pw, "certificate signed by unknown authority"},
		{"no client certificate", []string{"--etcd", ep, "--etcd-cacert", ca.CA, "--etcd-user", "trainer"}, pw, "etcd not reachable: TLS: remote error: tls:"},
		{"a user without /tierflow/", append(append([]string{}, tls...), "--etcd-user", "other"), otherPW, "etcd refused the credentials (user other may not read and write /tierflow/"},
		{"http endpoint with a CA", []string{"--etcd", strings.Replace(ep, "https", "http", 1), "--etcd-cacert", ca.CA, "--etcd-user", "trainer"}, pw, "the endpoints are http:// (TLS needs https://)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(distargs.PasswordEnv, tc.env)
			work := filepath.Join(t.TempDir(), "work")
			args := append(append(append([]string{}, train...), tc.args...), "--workdir", work, "--json")
			out, errOut, code := runCmd(args...)
			if tc.want == "" {
				require.Equal(t, 0, code, errOut)
				var got dist.DistOutput
				require.NoError(t, json.Unmarshal([]byte(out), &got))
				assert.Equal(t, ep, got.Etcd)
				assert.Zero(t, got.Members, "an existing cluster: none started")
				require.Len(t, got.Epochs, 1)
				buckets := 0
				for _, tr := range got.Epochs[0].Trainers {
					buckets += tr.Buckets
				}
				assert.Equal(t, 16, buckets)
				assert.NotContains(t, errOut, pw, "the password is never printed")
				yaml, err := os.ReadFile(filepath.Join(work, RunYAML))
				require.NoError(t, err)
				assert.Contains(t, string(yaml), "etcd-user: trainer\n")
				assert.Contains(t, string(yaml), "etcd-cacert: "+ca.CA+"\n")
				assert.NotContains(t, string(yaml), pw, "nor written in run.yaml")
				return
			}
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, pw, "the password is never printed")
			_, err := os.Stat(work)
			assert.ErrorIs(t, err, os.ErrNotExist, "refused before the work directory is made")
		})
	}
	// A trainer with the wrong password: the same line, exit 2.
	t.Setenv(distargs.PasswordEnv, "not-"+pw)
	out, errOut, code := runCmd(append(append([]string{"trainer"}, tls...), "--etcd-user", "trainer", "--store", dir, "--run", "/tierflow/x", "--id", "0")...)
	assert.Equal(t, 2, code, errOut)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "etcd refused the credentials")
}
