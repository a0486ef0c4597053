package grpcserver

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// Authenticator decides whether a call may do what it asks. The endpoint
// calls Authorize at the start of every RPC with the call's context
// (metadata, peer) and the request; a non-nil Status is answered instead
// (UNAUTHORIZED for a failed signature or a denied permission, as the
// proxy answers both). Any goroutine; it must not block on storage.
type Authenticator interface {
	Authorize(ctx context.Context, req any) *v2.Status
}

// authorize runs the configured Authenticator; nil when none is set.
func (s *service) authorize(ctx context.Context, req any) *v2.Status {
	if s.auth == nil {
		return nil
	}
	return s.auth.Authorize(ctx, req)
}
