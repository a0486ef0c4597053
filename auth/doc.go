// Package auth owns authentication and authorization of client requests
// (today remoting frames; the same users and policies serve every
// protocol), as RocketMQ's ACL 2.0 (auth/ module: AuthenticationPipeline,
// AuthorizationPipeline, DefaultAuthenticationHandler,
// AclAuthorizationHandler, DefaultAuthorizationContextBuilder) and, for
// accounts of an ACL 1.0 plain_acl.yml, as PlainAccessValidator did.
//
// It holds the ACL 2.0 users and ACLs in memory, loaded from popstore's meta
// column family at start (one JSON document, metaKey) and published as
// immutable snapshots. Verifier.Check runs on the gnet event loops before
// any handler (through handler/guard): it reads the published snapshot, verifies the HMAC-SHA1
// Signature the client's AclClientRPCHook computed over the received
// extFields and body (rebuilding the signed content with package client's
// SignedContent, the code clients sign with), and matches the request's
// resources against the user's policies. The admin methods (CreateUser ...
// ListACLs, behind AUTH_CREATE_USER 3001 .. AUTH_LIST_ACL 3010) queue one
// write on the batch writer's background lane and publish the new snapshot
// only after it is durable. The ACL 1.0 file is polled for changes by one
// goroutine and swapped atomically.
//
// It must not answer the network or wait on storage from Check, and must
// never log or label a metric with a password, secret key or signature.
// It imports no protocol server package (remoting, handler, grpc) and
// not the core (broker).
package auth
