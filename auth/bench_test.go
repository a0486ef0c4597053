package auth

import (
	"net"
	"testing"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// BenchmarkCheckAck is Verifier.Check of one signed ACK_MESSAGE as the
// Java client sends it: authentication (HMAC-SHA1 over the extFields) and
// authorization of a normal user with a three-entry ACL. Compare with the
// ~µs an ACK costs the server end to end (docs/PERFORMANCE.md).
func BenchmarkCheckAck(b *testing.B) { benchCheckAck(b, UserNormal) }

// BenchmarkCheckAckSuper is BenchmarkCheckAck for a super user (what
// make bench-auth signs as): no resource derivation, no policy match.
func BenchmarkCheckAckSuper(b *testing.B) { benchCheckAck(b, UserSuper) }

func benchCheckAck(b *testing.B, typ string) {
	s := newState()
	s.putUser(User{Username: "app", Password: "app-secret-123", Type: typ, Status: UserEnable})
	info := AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []EntryInfo{
		{Resource: "Topic:bench*", Actions: []string{"Pub", "Sub"}, Decision: "Allow"},
		{Resource: "Group:bench_group", Actions: []string{"Sub"}, Decision: "Allow"},
		{Resource: "Topic:secret", Actions: []string{"All"}, Decision: "Deny"},
	}}}}
	acl, err := info.toACL("")
	if err != nil {
		b.Fatal(err)
	}
	s.acls["app"] = &acl
	v := &Verifier{set: Settings{Authentication: true, Authorization: true, ClusterName: "C"}}
	v.t.published.Store(s)
	ext := map[string]string{"consumerGroup": "bench_group", "topic": "bench_topic", "queueId": "3",
		"offset": "123456", "extraInfo": "123456 1764640000000 300000 1 popshim-a 3 123456", "bname": "popshim-a"}
	ext[FieldAccessKey] = "app"
	ext[FieldSignature] = client.Sign(ext, nil, "app-secret-123")
	// decoded as the server decodes it: the typed slots, no ExtFields map
	req, err := codec.DecodeFrame(codec.AppendFrame(nil, &codec.Command{Code: codec.RequestAckMessage, Version: codec.CurrentVersion, ExtFields: ext}))
	if err != nil || req.ExtFields != nil {
		b.Fatalf("decode: %v, ExtFields %v", err, req.ExtFields)
	}
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Check(remote, req); err != nil {
			b.Fatal(err)
		}
	}
}
