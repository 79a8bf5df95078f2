package dist

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Server is a single-node etcd embedded in this process: the one-machine
// default, so that `realrun --trainers N` needs nothing installed.
type Server struct {
	e    *embed.Etcd
	once sync.Once
	// Endpoint is the client URL trainers connect to.
	Endpoint string
}

// StartServer starts an embedded etcd with its data in dir, serving
// clients on host:port (port 0: a free one) and peers on a free port of
// 127.0.0.1. Restarting it on the same dir and address keeps its data.
// A port it chose that another process takes before etcd binds it is
// chosen again (up to startTries times).
func StartServer(dir, host string, port int) (*Server, error) {
	var err error
	for try := 0; try < startTries; try++ {
		var srv *Server
		if srv, err = startServer(dir, host, port); err == nil || !addrInUse(err) {
			return srv, err
		}
	}
	return nil, err
}

// startTries is how often StartServer chooses free ports before it gives
// up on a machine whose ports keep being taken.
const startTries = 5

// addrInUse reports whether err is a listen on an address in use.
func addrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

func startServer(dir, host string, port int) (*Server, error) {
	if port == 0 {
		var err error
		if port, err = freePort(host); err != nil {
			return nil, err
		}
	}
	peer, err := freePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	cu := url.URL{Scheme: "http", Host: net.JoinHostPort(host, fmt.Sprint(port))}
	pu := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", fmt.Sprint(peer))}
	e, err := startEmbedded(Member{Name: "tierflow", Dir: dir, Client: cu.String(), Peer: pu.String()}, 30*time.Second)
	if err != nil {
		return nil, err
	}
	return &Server{e: e, Endpoint: cu.String()}, nil
}

// Close stops the server; closing it again does nothing.
func (s *Server) Close() { s.once.Do(s.e.Close) }

// freePort asks the kernel for a free TCP port on host.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("etcd: no free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
