package dist

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestRetryRefused: a trainer rides out an outage (retrying until it
// ends or the limit passes) but stops at once, saying so, when etcd
// refuses the request itself — too large, malformed, not permitted —
// where it used to retry for 30 s and call etcd unreachable.
func TestRetryRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		tries   int // the op fails this many times, then succeeds
		want    string
		retried bool
	}{
		{name: "request too large", err: rpctypes.ErrGRPCRequestTooLarge, tries: 100, want: "etcd refused the request"},
		{name: "message over the client's limit", err: status.Error(codes.ResourceExhausted, "trying to send message larger than max"), tries: 100, want: "etcd refused the request"},
		{name: "permission denied", err: rpctypes.ErrGRPCPermissionDenied, tries: 100, want: "etcd refused the request"},
		{name: "no leader, then back", err: rpctypes.ErrGRPCNoLeader, tries: 2, retried: true},
		{name: "unavailable past the limit", err: status.Error(codes.Unavailable, "connection refused"), tries: 100, want: "etcd unreachable for", retried: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &Trainer{Coord: &Coord{OpTimeout: time.Second}, MaxOutage: 1200 * time.Millisecond, Log: nil}
			calls := 0
			err := tr.retry(context.Background(), "relations", func(context.Context) error {
				calls++
				if calls <= tc.tries {
					return tc.err
				}
				return nil
			})
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.want)
				assert.True(t, errors.Is(err, tc.err) || status.Code(errors.Unwrap(err)) == status.Code(tc.err), "the cause stays wrapped")
			}
			assert.Equal(t, tc.retried, calls > 1, "calls: %d", calls)
		})
	}
}
