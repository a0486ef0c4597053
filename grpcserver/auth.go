package grpcserver

import (
	"context"
	"encoding/hex"
	"net"
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/auth"
)

// Authenticator decides whether a call may do what it asks. The endpoint
// calls Authorize at the start of every RPC with the call's context
// (metadata, peer) and the request (for Telemetry: each Settings item);
// a non-nil Status is answered instead (UNAUTHORIZED for a failed
// signature or a denied permission, as the proxy answers both). Any
// goroutine; it must not block on storage.
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

// MetaAuthorization and MetaDateTime are the request metadata of ACL 2.0
// over gRPC (common/.../constant/GrpcConstants.java).
const (
	MetaAuthorization = "authorization"
	MetaDateTime      = "x-mq-date-time"
)

// VerifierAuth authenticates and authorizes calls with the users and ACL
// 2.0 policies of popshim's auth.Verifier, the ones remoting requests are
// judged by (auth.Verifier.CheckSigned).
//
// Authentication, as the proxy's DefaultAuthenticationContextBuilder: the
// authorization header "MQv2-HMAC-SHA1 Credential=<ak>[/…],
// SignedHeaders=x-mq-date-time, Signature=<hex>" is split at its first
// space, the rest at commas, each part at its first '='; the user is the
// Credential up to its first '/' (the Go client sends "<ak>//Rocketmq",
// Java "<ak>"); the Signature (hex, either case) must be HMAC-SHA1 of the
// user's password over the x-mq-date-time value exactly as sent. The
// date-time is not checked for freshness (the clients stamp local time
// labelled Z), as in the proxy.
//
// Authorization, as DefaultAuthorizationContextBuilder for gRPC requests:
// QueryRoute Pub or Sub on the topic; SendMessage, EndTransaction and
// RecallMessage Pub on the topic; ReceiveMessage, AckMessage, ChangeInvisibleDuration,
// ForwardMessageToDeadLetterQueue and QueryAssignment Sub on the topic and
// the group; Heartbeat and NotifyClientTermination Sub on the group they
// name; a Telemetry Settings item Pub on its publishing topics, or Sub on
// its group and subscribed topics.
type VerifierAuth struct {
	v *auth.Verifier
}

// NewVerifierAuth wraps v.
func NewVerifierAuth(v *auth.Verifier) *VerifierAuth { return &VerifierAuth{v: v} }

// Authorize implements Authenticator.
func (a *VerifierAuth) Authorize(ctx context.Context, req any) *v2.Status {
	sr, bad := signedRequestOf(ctx)
	if bad != "" {
		return StatusOfAuth(bad)
	}
	if err := a.v.CheckSigned(sr, needsOf(req)); err != nil {
		return StatusOfAuth(err.Error())
	}
	return nil
}

// signedRequestOf reads the credentials of a call. A call without an
// authorization header is unauthenticated (CheckSigned decides: whitelist,
// else "username cannot be null."); a header that does not parse is
// refused with the message the proxy's DefaultAuthenticationContextBuilder
// throws for it (returned as bad): no x-mq-date-time "datetime is null", no
// space "authentication header is incorrect", a part without '='
// "authentication keyValues length is incorrect, actual length=1", a
// signature that is not hex "create authentication context error.".
func signedRequestOf(ctx context.Context) (sr auth.SignedRequest, bad string) {
	if p := peerOf(ctx); p.IsValid() {
		sr.Remote = net.TCPAddrFromAddrPort(p)
	}
	h := metaValue(ctx, MetaAuthorization)
	if h == "" {
		return sr, ""
	}
	date := metaValue(ctx, MetaDateTime)
	if date == "" {
		return sr, "datetime is null"
	}
	_, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok {
		return sr, "authentication header is incorrect"
	}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return sr, "authentication keyValues length is incorrect, actual length=1"
		}
		switch strings.TrimSpace(k) {
		case "Credential":
			ak, _, _ := strings.Cut(strings.TrimSpace(v), "/")
			sr.AccessKey = ak
		case "Signature":
			sig, err := hex.DecodeString(strings.TrimSpace(v))
			if err != nil {
				return sr, "create authentication context error."
			}
			sr.Signature = sig
		}
	}
	sr.Content = []byte(date)
	sr.Authenticated = sr.AccessKey != "" && sr.Signature != nil
	return sr, ""
}

// needsOf lists what a request asks for (see VerifierAuth).
func needsOf(req any) []auth.Need {
	topicSub := func(topic, group string) []auth.Need {
		return []auth.Need{auth.TopicNeed(topic, auth.ActSub), auth.GroupNeed(group, auth.ActSub)}
	}
	switch r := req.(type) {
	case *v2.QueryRouteRequest:
		return []auth.Need{auth.TopicNeed(r.GetTopic().GetName(), auth.ActPub|auth.ActSub)}
	case *v2.SendMessageRequest:
		var out []auth.Need
		seen := map[string]bool{}
		for _, m := range r.GetMessages() {
			if t := m.GetTopic().GetName(); !seen[t] {
				seen[t] = true
				out = append(out, auth.TopicNeed(t, auth.ActPub))
			}
		}
		return out
	case *v2.EndTransactionRequest:
		return []auth.Need{auth.TopicNeed(r.GetTopic().GetName(), auth.ActPub)}
	case *v2.RecallMessageRequest:
		return []auth.Need{auth.TopicNeed(r.GetTopic().GetName(), auth.ActPub)}
	case *v2.ReceiveMessageRequest:
		return topicSub(r.GetMessageQueue().GetTopic().GetName(), r.GetGroup().GetName())
	case *v2.AckMessageRequest:
		return topicSub(r.GetTopic().GetName(), r.GetGroup().GetName())
	case *v2.ChangeInvisibleDurationRequest:
		return topicSub(r.GetTopic().GetName(), r.GetGroup().GetName())
	case *v2.ForwardMessageToDeadLetterQueueRequest:
		return topicSub(r.GetTopic().GetName(), r.GetGroup().GetName())
	case *v2.QueryAssignmentRequest:
		return topicSub(r.GetTopic().GetName(), r.GetGroup().GetName())
	case *v2.HeartbeatRequest:
		if g := r.GetGroup().GetName(); g != "" {
			return []auth.Need{auth.GroupNeed(g, auth.ActSub)}
		}
	case *v2.NotifyClientTerminationRequest:
		if g := r.GetGroup().GetName(); g != "" {
			return []auth.Need{auth.GroupNeed(g, auth.ActSub)}
		}
	case *v2.Settings:
		var out []auth.Need
		for _, t := range r.GetPublishing().GetTopics() {
			out = append(out, auth.TopicNeed(t.GetName(), auth.ActPub))
		}
		if sub := r.GetSubscription(); sub != nil {
			out = append(out, auth.GroupNeed(sub.GetGroup().GetName(), auth.ActSub))
			for _, e := range sub.GetSubscriptions() {
				out = append(out, auth.TopicNeed(e.GetTopic().GetName(), auth.ActSub))
			}
		}
		return out
	}
	return nil
}
