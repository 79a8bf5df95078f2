package dist

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Member is one member of an etcd cluster this program starts: its
// name, data directory, the URLs it serves clients and peers on, and
// the cluster it starts in (name=peerURL,…: every member's).
type Member struct {
	Name    string
	Dir     string
	Client  string
	Peer    string
	Cluster string
}

// startEmbedded starts member m in this process and waits until it has
// joined its cluster (a single member: until it serves), at most wait.
func startEmbedded(m Member, wait time.Duration) (*embed.Etcd, error) {
	cu, err := url.Parse(m.Client)
	if err != nil {
		return nil, fmt.Errorf("etcd member %s: client URL %q: %w", m.Name, m.Client, err)
	}
	pu, err := url.Parse(m.Peer)
	if err != nil {
		return nil, fmt.Errorf("etcd member %s: peer URL %q: %w", m.Name, m.Peer, err)
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = m.Name, m.Dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = m.Cluster
	if cfg.InitialCluster == "" {
		cfg.InitialCluster = m.Name + "=" + pu.String()
	}
	cfg.InitialClusterToken = "tierflow-" + m.Cluster
	// Quiet: etcd's own log would interleave with the run's output, and
	// its shutdown reports closed listeners as errors.
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd member %s: %w", m.Name, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd member %s: %w", m.Name, err)
	case <-time.After(wait):
		e.Close()
		return nil, fmt.Errorf("etcd member %s: not ready after %s", m.Name, wait)
	}
	return e, nil
}

// RunMember runs member m in this process until ctx is done (a
// cluster's member started as a process of its own, StartCluster).
func RunMember(ctx context.Context, m Member) error {
	e, err := startEmbedded(m, 2*time.Minute)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-ctx.Done():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("etcd member %s: %w", m.Name, err)
	}
}

// ClusterOptions are a cluster of etcd members that StartCluster starts
// as processes of their own, for tests and demonstrations on one
// machine or on test hosts (production runs use a cluster of their own,
// EtcdClient).
type ClusterOptions struct {
	// Members is how many (3 tolerates the loss of one).
	Members int
	// Dir holds the members' data directories.
	Dir string
	// Hosts are the addresses the members serve on, one per member (on
	// ports 2379 and 2380); none: all on Listen, on free ports.
	Hosts  []string
	Listen string
	// Argv is the command line that runs member m (RunMember) as a
	// process; Wrap, when set, wraps member i's (ip netns exec …).
	Argv func(m Member) []string
	Wrap func(i int, argv []string) []string
	// Log receives the members' stderr.
	Log io.Writer
}

// Cluster is a running cluster that StartCluster started: its members
// and, once up, a client of it as root with the run's own password.
type Cluster struct {
	Members []Member
	Client  EtcdClient
	cmds    []*exec.Cmd
	mu      sync.Mutex
	exited  []chan struct{}
}

// StartCluster starts o.Members members as processes, waits until the
// cluster has a leader, and enables authentication with a root user
// whose password is new for this cluster (Cluster.Client holds it).
func StartCluster(ctx context.Context, o ClusterOptions) (*Cluster, error) {
	if o.Members < 1 {
		return nil, fmt.Errorf("etcd cluster: %d members: at least 1", o.Members)
	}
	if len(o.Hosts) > 0 && len(o.Hosts) != o.Members {
		return nil, fmt.Errorf("etcd cluster: %d hosts for %d members", len(o.Hosts), o.Members)
	}
	listen := o.Listen
	if listen == "" {
		listen = "127.0.0.1"
	}
	c := &Cluster{}
	var peers []string
	for i := range o.Members {
		host, cport, pport := listen, 2379, 2380
		if len(o.Hosts) > 0 {
			host = o.Hosts[i]
		} else {
			var err error
			if cport, err = freePort(listen); err != nil {
				return nil, err
			}
			if pport, err = freePort(listen); err != nil {
				return nil, err
			}
		}
		m := Member{Name: fmt.Sprintf("m%d", i), Dir: fmt.Sprintf("%s/m%d", o.Dir, i),
			Client: "http://" + net.JoinHostPort(host, fmt.Sprint(cport)), Peer: "http://" + net.JoinHostPort(host, fmt.Sprint(pport))}
		c.Members = append(c.Members, m)
		peers = append(peers, m.Name+"="+m.Peer)
		c.Client.Endpoints = append(c.Client.Endpoints, m.Client)
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	for i := range c.Members {
		c.Members[i].Cluster = strings.Join(peers, ",")
		argv := o.Argv(c.Members[i])
		if o.Wrap != nil {
			argv = o.Wrap(i, argv)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = io.Discard, log
		setDeathSignal(cmd)
		if err := cmd.Start(); err != nil {
			c.Close()
			return nil, fmt.Errorf("etcd member %d: %w", i, err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		c.cmds, c.exited = append(c.cmds, cmd), append(c.exited, done)
	}
	// Up: a client of all of them gets a linearizable read (a leader
	// and a quorum).
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var cli *clientv3.Client
	for cli == nil {
		var err error
		if cli, err = c.Client.Connect(5 * time.Second); err == nil {
			break
		}
		if err := c.gone(ctx); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	defer cli.Close()
	for {
		octx, ocancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := cli.Get(octx, "/tierflow")
		ocancel()
		if err == nil {
			break
		}
		if err := c.gone(ctx); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	pw, err := EnableAuth(ctx, cli)
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	c.Client.User, c.Client.Password = "root", pw
	return c, nil
}

// gone waits a little and reports a member that exited or ctx done.
func (c *Cluster) gone(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("etcd cluster of %d members: no leader: %w", len(c.Members), ctx.Err())
	case <-time.After(200 * time.Millisecond):
	}
	for i, ch := range c.exited {
		select {
		case <-ch:
			return fmt.Errorf("etcd member %d exited while the cluster started: %v", i, c.cmds[i].ProcessState)
		default:
		}
	}
	return nil
}

// Kill kills member i at once (SIGKILL), as a machine lost would.
func (c *Cluster) Kill(i int) error {
	if i < 0 || i >= len(c.cmds) {
		return fmt.Errorf("etcd cluster: no member %d", i)
	}
	if err := c.cmds[i].Process.Kill(); err != nil {
		return fmt.Errorf("etcd member %d: %w", i, err)
	}
	<-c.exited[i]
	return nil
}

// Leader is the index of the cluster's leader as its members report it.
func (c *Cluster) Leader(ctx context.Context, cli *clientv3.Client) (int, error) {
	for _, ep := range c.Client.Endpoints {
		octx, cancel := context.WithTimeout(ctx, 2*time.Second)
		s, err := cli.Status(octx, ep)
		cancel()
		if err != nil {
			continue
		}
		if s.Header.MemberId == s.Leader {
			for i, m := range c.Members {
				if m.Client == ep {
					return i, nil
				}
			}
		}
	}
	return -1, errors.New("etcd cluster: no member says it leads")
}

// Close stops every member (SIGKILL: their data directories are the
// run's, thrown away with it) and waits for them.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, cmd := range c.cmds {
		cmd.Process.Kill()
		<-c.exited[i]
	}
	c.cmds, c.exited = nil, nil
	return nil
}

// EnableAuth turns on authentication with a root user whose password is
// new (32 random bytes, hex) and returns it: an etcd this program
// starts holds no fixed credential.
func EnableAuth(ctx context.Context, cli *clientv3.Client) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("etcd root password: %w", err)
	}
	pw := hex.EncodeToString(b)
	if _, err := cli.RoleAdd(ctx, "root"); err != nil && !errors.Is(err, rpctypes.ErrRoleAlreadyExist) {
		return "", fmt.Errorf("etcd auth: %w", err)
	}
	if _, err := cli.UserAdd(ctx, "root", pw); err != nil {
		return "", fmt.Errorf("etcd auth: %w", err)
	}
	if _, err := cli.UserGrantRole(ctx, "root", "root"); err != nil {
		return "", fmt.Errorf("etcd auth: %w", err)
	}
	if _, err := cli.AuthEnable(ctx); err != nil {
		return "", fmt.Errorf("etcd auth: %w", err)
	}
	return pw, nil
}

// WritePassword writes a password to path, readable by its owner only,
// whole or not at all.
func WritePassword(path, pw string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(pw+"\n"), 0o600); err != nil {
		return fmt.Errorf("etcd password file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("etcd password file: %w", err)
	}
	return nil
}
