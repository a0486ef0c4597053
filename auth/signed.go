package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"net"
)

// A protocol-neutral entry for requests that are not remoting frames (the
// RocketMQ 5 gRPC endpoint). The client proves its secret with an
// HMAC-SHA1 over content the protocol names (gRPC: the exact x-mq-date-time
// header value, DefaultAuthenticationContextBuilder), and the request asks
// for actions on topics and groups the protocol adapter derives from it
// (DefaultAuthorizationContextBuilder for gRPC requests). The users,
// their passwords and the ACL 2.0 policies are the ones remoting requests
// are judged by.

// Need is one thing a request asks for: actions on one resource (a topic
// or a group; a group named by its retry or DLQ topic stands for the
// group).
type Need struct {
	res  Resource
	acts Action
}

// TopicNeed asks for acts on topic.
func TopicNeed(topic string, acts Action) Need { return Need{res: ofTopic(topic), acts: acts} }

// GroupNeed asks for acts on consumer group.
func GroupNeed(group string, acts Action) Need { return Need{res: ofGroup(group), acts: acts} }

// SignedRequest is the caller of a non-remoting request: its access key
// (the user name), the bytes it signed and the raw HMAC-SHA1 it sent, and
// its address (for policies with source IPs). Authenticated is false when
// the request carried no credentials at all.
type SignedRequest struct {
	AccessKey     string
	Content       []byte
	Signature     []byte
	Remote        net.Addr
	Authenticated bool
}

// CheckSigned decides whether r may do what needs ask: nil, or an *Error
// with RocketMQ's remark. Authentication (with --auth-authentication):
// the user must exist and be enabled and Signature must be
// HMAC-SHA1(password, Content), compared in constant time; no credentials
// is "username cannot be null.". Authorization (with
// --auth-authorization): every need must be granted by the user's ACL 2.0
// policies, as for remoting; super users pass. Accounts of an ACL 1.0
// file (--acl-file) are not served this way: with only ACL 1.0 on, every
// request is refused (the 1.0 rules are defined over remoting request
// codes). No whitelist applies. Any goroutine; memory only, one HMAC.
func (v *Verifier) CheckSigned(r SignedRequest, needs []Need) error {
	if v.plain != nil && !v.set.Authentication && !v.set.Authorization {
		return denied("ACL 1.0 accounts (--acl-file) are not accepted on this endpoint; use ACL 2.0 users")
	}
	if !v.set.Authentication && !v.set.Authorization {
		return nil
	}
	s := v.t.snapshot()
	if v.set.Authentication {
		if !r.Authenticated || r.AccessKey == "" {
			return denied("username cannot be null.")
		}
		u, ok := s.users[r.AccessKey]
		switch {
		case !ok:
			return denied("User:" + r.AccessKey + " is not found.")
		case u.Status == UserDisable:
			return denied("User:" + r.AccessKey + " is disabled.")
		}
		mac := hmac.New(sha1.New, []byte(u.Password))
		mac.Write(r.Content)
		if !hmac.Equal(mac.Sum(nil), r.Signature) {
			return denied("check signature failed.")
		}
	}
	if !v.set.Authorization || len(needs) == 0 {
		return nil
	}
	if r.AccessKey == "" {
		return denied("Authorization failed. Please verify your access rights and try again.")
	}
	ip := peerIP{addr: r.Remote}
	for _, n := range needs {
		if err := s.authorize(r.AccessKey, need(n), &ip); err != nil {
			return err
		}
	}
	return nil
}
