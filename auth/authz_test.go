package auth

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// aclState is a state with one normal user u1 whose ACL is built from
// entries, and one super user root.
func aclState(t *testing.T, entries ...EntryInfo) *state {
	t.Helper()
	s := newState()
	s.putUser(User{Username: "u1", Password: "pw", Type: UserNormal, Status: UserEnable})
	s.putUser(User{Username: "root", Password: "pw", Type: UserSuper, Status: UserEnable})
	if len(entries) > 0 {
		info := AclInfo{Subject: "User:u1", Policies: []PolicyInfo{{Entries: entries}}}
		acl, err := info.toACL("")
		require.NoError(t, err)
		s.acls["u1"] = &acl
	}
	return s
}

func ask(s *state, user, res string, acts Action, ip string) error {
	r, _ := ParseResource(res)
	return s.authorize(user, need{r, acts}, &peerIP{ip: ip, done: true})
}

func TestAuthorize_LiteralPrefixAnyAndDeny(t *testing.T) {
	s := aclState(t,
		EntryInfo{Resource: "Topic:orders*", Actions: []string{"Pub"}, Decision: "Allow"},
		EntryInfo{Resource: "Topic:orders-secret", Actions: []string{"Pub", "Sub"}, Decision: "Deny"},
		EntryInfo{Resource: "Group:g1", Actions: []string{"Sub"}, Decision: "Allow"},
		EntryInfo{Resource: "Topic:*", Actions: []string{"Get"}, Decision: "Allow"},
	)
	require.NoError(t, ask(s, "u1", "Topic:orders-eu", ActPub, "127.0.0.1"))
	err := ask(s, "u1", "Topic:orders-secret", ActPub, "127.0.0.1")
	require.EqualError(t, err, "User:u1 has no permission to access Topic:orders-secret from 127.0.0.1, the decision is deny.")
	err = ask(s, "u1", "Topic:other", ActPub, "10.0.0.1")
	require.EqualError(t, err, "User:u1 has no permission to access Topic:other from 10.0.0.1, no matched policies.")
	require.NoError(t, ask(s, "u1", "Topic:other", ActGet, "10.0.0.1"), "Topic:* grants Get")
	require.NoError(t, ask(s, "u1", "Group:g1", ActSub, ""))
	require.Error(t, ask(s, "u1", "Group:g2", ActSub, ""))
	require.Error(t, ask(s, "u1", "Group:g1", ActUpdate, ""), "Sub does not grant Update")
	require.NoError(t, ask(s, "root", "Cluster:C", ActUpdate, ""), "super users pass")
	require.EqualError(t, ask(s, "ghost", "Topic:t", ActPub, ""), "User:ghost not found.")
	require.EqualError(t, ask(aclState(t), "u1", "Topic:t", ActPub, "1.2.3.4"),
		"User:u1 has no permission to access Topic:t from 1.2.3.4, no matched policies.")
}

func TestAuthorize_LongerPrefixWinsAndAll(t *testing.T) {
	s := aclState(t,
		EntryInfo{Resource: "Topic:a*", Actions: []string{"All"}, Decision: "Allow"},
		EntryInfo{Resource: "Topic:ab*", Actions: []string{"Pub"}, Decision: "Deny"},
	)
	require.NoError(t, ask(s, "u1", "Topic:ax", ActSub, ""))
	require.Error(t, ask(s, "u1", "Topic:abc", ActPub, ""), "the longer prefix decides")
}

func TestAuthorize_SourceIPs(t *testing.T) {
	s := aclState(t, EntryInfo{Resource: "Topic:t", Actions: []string{"Pub"}, SourceIPs: []string{"10.1.0.0/16", "192.168.0.7"}, Decision: "Allow"})
	require.NoError(t, ask(s, "u1", "Topic:t", ActPub, "10.1.200.3"))
	require.NoError(t, ask(s, "u1", "Topic:t", ActPub, "192.168.0.7"))
	require.Error(t, ask(s, "u1", "Topic:t", ActPub, "10.2.0.1"))
	require.Error(t, ask(s, "u1", "Topic:t", ActPub, ""))
}

func TestAclInfo_ValidationMessages(t *testing.T) {
	for _, c := range []struct {
		e    EntryInfo
		want string
	}{
		{EntryInfo{Resource: "Bogus:x", Actions: []string{"Pub"}, Decision: "Allow"}, "The resource is null."},
		{EntryInfo{Resource: "Topic:x", Actions: []string{"Nope"}, Decision: "Allow"}, "The actions is empty."},
		{EntryInfo{Resource: "Topic:x", Actions: []string{"Any"}, Decision: "Allow"}, "The actions can not be Any."},
		{EntryInfo{Resource: "Topic:x", Actions: []string{"Pub"}, SourceIPs: []string{"300.1.1.1"}, Decision: "Allow"}, "The source ip is invalid."},
		{EntryInfo{Resource: "Topic:x", Actions: []string{"Pub"}, Decision: "Maybe"}, "The decision is null or illegal."},
	} {
		info := AclInfo{Policies: []PolicyInfo{{Entries: []EntryInfo{c.e}}}}
		_, err := info.toACL("User:u1")
		require.EqualError(t, err, c.want)
	}
}

// needsOf follows DefaultAuthorizationContextBuilder for the POP path.
func TestNeedsOf_PopPathAndSend(t *testing.T) {
	var buf [4]need
	req := &codec.Command{Code: codec.RequestAckMessage, ExtFields: map[string]string{"consumerGroup": "G", "topic": "T", "extraInfo": "x"}}
	n, err := needsOf(buf[:0], req, "C")
	require.NoError(t, err)
	require.Equal(t, []need{{Resource{ResGroup, "G", PatLiteral}, ActSub}, {Resource{ResTopic, "T", PatLiteral}, ActSub}}, n)
	req = &codec.Command{Code: codec.RequestPopMessage, ExtFields: map[string]string{"consumerGroup": "G", "topic": "%RETRY%G_T"}}
	n, _ = needsOf(buf[:0], req, "C")
	require.Equal(t, need{Resource{ResGroup, "G_T", PatLiteral}, ActSub}, n[1], "a retry topic stands for its group")
	req = &codec.Command{Code: codec.RequestSendMessageV2, ExtFields: map[string]string{"a": "PG", "b": "T"}}
	n, _ = needsOf(buf[:0], req, "C")
	require.Equal(t, []need{{Resource{ResTopic, "T", PatLiteral}, ActPub}}, n)
	req = &codec.Command{Code: RequestCreateUser, ExtFields: map[string]string{"username": "x"}}
	n, _ = needsOf(buf[:0], req, "C")
	require.Equal(t, []need{{Resource{ResCluster, "C", PatLiteral}, ActUpdate}}, n)
	req = &codec.Command{Code: codec.RequestHeartBeat, ExtFields: map[string]string{"x": "y"}, Body: []byte("{bad")}
	_, err = needsOf(buf[:0], req, "C")
	require.EqualError(t, err, "parse authorization context error.")
}

// TestNeedsOf_DecodedSend: a SEND_MESSAGE_V2 or SEND_BATCH_MESSAGE decoded
// from a frame keeps its single-letter fields in the typed slots, not in
// ExtFields; the needs (RBAC) and the resources (plain ACL) still come
// from them.
func TestNeedsOf_DecodedSend(t *testing.T) {
	for _, code := range []int32{codec.RequestSendMessageV2, codec.RequestSendBatchMessage} {
		for _, c := range []struct {
			topic string
			need  need
			plain map[string]byte
		}{
			{"T", need{Resource{ResTopic, "T", PatLiteral}, ActPub}, map[string]byte{"T": permPub}},
			{"%RETRY%PG", need{Resource{ResGroup, "PG", PatLiteral}, ActSub}, map[string]byte{"%RETRY%PG": permSub}},
		} {
			src := &codec.Command{Code: code, Language: "JAVA", Opaque: 3}
			codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: c.topic, QueueID: 1, BornTimestamp: 5}.EncodeV2(src)
			src.SetExt(FieldAccessKey, "ak")
			src.SetExt(FieldSignature, "c2ln")
			req, err := codec.DecodeFrame(codec.AppendFrame(nil, src))
			require.NoError(t, err)
			require.Nil(t, req.ExtFields, "fields in the typed slots")
			n, err := needsOf(nil, req, "C")
			require.NoError(t, err)
			require.Equal(t, []need{c.need}, n, "code %d topic %s", code, c.topic)
			p, err := plainNeeds(req)
			require.NoError(t, err)
			require.Equal(t, c.plain, p, "code %d topic %s", code, c.topic)
		}
	}
}

func TestSourceIP(t *testing.T) {
	require.Equal(t, "127.0.0.1", sourceIP(&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5}))
	require.Equal(t, "::1", sourceIP(&net.TCPAddr{IP: net.ParseIP("::1"), Port: 5}))
	require.Equal(t, "", sourceIP(nil))
}

// TestNeedsOf_LockBatch: LOCK_BATCH_MQ and UNLOCK_BATCH_MQ ask Sub on the
// body's group and on each non-retry topic of mqSet
// (DefaultAuthorizationContextBuilder); GET_CONSUMER_RUNNING_INFO asks Get
// on the group, CONSUME_MESSAGE_DIRECTLY Sub on group and topic (their
// @RocketMQAction).
func TestNeedsOf_LockBatch(t *testing.T) {
	body := []byte(`{"clientId":"c","consumerGroup":"G","mqSet":[{"brokerName":"b","queueId":0,"topic":"T"},` +
		`{"brokerName":"b","queueId":0,"topic":"%RETRY%G"}],"onlyThisBroker":false}`)
	for _, code := range []int32{codec.RequestLockBatchMQ, codec.RequestUnlockBatchMQ} {
		n, err := needsOf(nil, &codec.Command{Code: code, Body: body}, "C")
		require.NoError(t, err)
		require.Equal(t, []need{{Resource{ResGroup, "G", PatLiteral}, ActSub}, {Resource{ResTopic, "T", PatLiteral}, ActSub}}, n)
		_, err = needsOf(nil, &codec.Command{Code: code, Body: []byte("{bad")}, "C")
		require.EqualError(t, err, "parse authorization context error.")
	}
	n, _ := needsOf(nil, &codec.Command{Code: codec.RequestGetConsumerRunningInfo,
		ExtFields: map[string]string{"consumerGroup": "G", "clientId": "c"}}, "C")
	require.Equal(t, []need{{Resource{ResGroup, "G", PatLiteral}, ActGet}}, n)
	n, _ = needsOf(nil, &codec.Command{Code: codec.RequestConsumeMessageDirectly,
		ExtFields: map[string]string{"consumerGroup": "G", "topic": "T", "msgId": "x"}}, "C")
	require.Equal(t, []need{{Resource{ResGroup, "G", PatLiteral}, ActSub}, {Resource{ResTopic, "T", PatLiteral}, ActSub}}, n)
}
