// Package memobjects serves an in-memory S3-compatible object store
// (gofakes3) from this process: the one-machine default of a distributed
// run's --objects and the store of its tests, beside any real S3 server
// the same flag can name.
package memobjects

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is an in-memory object store listening on an address.
type Server struct {
	srv *http.Server
	// Endpoint is its URL (http://host:port).
	Endpoint string
}

// Start serves an empty in-memory object store on host:port (port 0: a
// free one) with bucket made. It checks no signature.
func Start(host string, port int, bucket string) (*Server, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	be := s3mem.New()
	if err := be.CreateBucket(bucket); err != nil {
		l.Close()
		return nil, fmt.Errorf("object store: %w", err)
	}
	srv := &http.Server{Handler: gofakes3.New(be).Server(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return &Server{srv: srv, Endpoint: "http://" + l.Addr().String()}, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }
