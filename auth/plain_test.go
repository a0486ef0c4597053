package auth

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

const plainYAML = `
globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: RocketMQ1
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
      - topicC=SUB
    groupPerms:
      - groupA=DENY
  - accessKey: rocketmq2
    secretKey: 12345678
    whiteRemoteAddress: 192.168.1.*
    admin: true
`

func signed(code int32, ext map[string]string, body []byte, ak, sk string) *codec.Command {
	ext[FieldAccessKey] = ak
	ext[FieldSignature] = client.Sign(ext, body, sk)
	return &codec.Command{Code: code, Version: codec.CurrentVersion, ExtFields: ext, Body: body}
}

func addr(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000} }

func TestPlain_AnswersAsAnACL1Broker(t *testing.T) {
	c, err := parsePlain([]byte(plainYAML))
	require.NoError(t, err)
	p := &plainACL{}
	p.cur.Store(c)
	check := func(ip string, req *codec.Command) error {
		handled, err := p.check(addr(ip), req, true)
		require.True(t, handled)
		return err
	}
	send := func(topic string) map[string]string { return map[string]string{"a": "PG", "b": topic} }
	require.NoError(t, check("127.0.0.1", signed(codec.RequestSendMessageV2, send("topicB"), []byte("x"), "RocketMQ1", "12345678")))
	require.EqualError(t, check("127.0.0.1", signed(codec.RequestSendMessageV2, send("topicA"), nil, "RocketMQ1", "12345678")),
		"org.apache.rocketmq.acl.common.AclException: No permission for topic:topicA")
	require.EqualError(t, check("127.0.0.1", signed(codec.RequestSendMessageV2, send("topicC"), nil, "RocketMQ1", "12345678")),
		"org.apache.rocketmq.acl.common.AclException: No permission for topic:topicC")
	require.EqualError(t, check("127.0.0.1", signed(codec.RequestSendMessageV2, send("other"), nil, "RocketMQ1", "12345678")),
		"org.apache.rocketmq.acl.common.AclException: No default permission for topic:other")
	require.EqualError(t, check("127.0.0.1", signed(codec.RequestSendMessageV2, send("topicB"), nil, "RocketMQ1", "wrong-secret")),
		"org.apache.rocketmq.acl.common.AclException: Check signature failed for accessKey=RocketMQ1")
	require.EqualError(t, check("127.0.0.1", signed(codec.RequestSendMessageV2, send("topicB"), nil, "nobody", "12345678")),
		"org.apache.rocketmq.acl.common.AclException: No acl config for nobody")
	require.EqualError(t, check("127.0.0.1", &codec.Command{Code: 10, ExtFields: map[string]string{"topic": "t"}}),
		"org.apache.rocketmq.acl.common.AclException: No accessKey is configured")
	pull := map[string]string{"topic": "topicC", "consumerGroup": "groupA"}
	require.EqualError(t, check("127.0.0.1", signed(codec.RequestPullMessage, pull, nil, "RocketMQ1", "12345678")),
		"org.apache.rocketmq.acl.common.AclException: No permission for group:groupA")
	require.EqualError(t, check("127.0.0.1", signed(codec.RequestUpdateAndCreateTopic, map[string]string{"topic": "x"}, nil, "RocketMQ1", "12345678")),
		"org.apache.rocketmq.acl.common.AclException: Need admin permission for request code=17, but accessKey=RocketMQ1 is not")
	// The admin account from its white address needs no signature; the
	// global white list lets anything through.
	require.NoError(t, check("192.168.1.20", &codec.Command{Code: 17, ExtFields: map[string]string{FieldAccessKey: "rocketmq2"}}))
	require.NoError(t, check("10.10.103.9", &codec.Command{Code: 10}))
	code, remark := Answer(check("127.0.0.1", &codec.Command{Code: 10, ExtFields: map[string]string{}}))
	require.Equal(t, codec.SystemError, code)
	require.Contains(t, remark, "AclException")
	// With ACL 2.0 on as well, other AccessKeys are left to it.
	handled, _ := p.check(addr("127.0.0.1"), signed(10, map[string]string{"topic": "t"}, nil, "v2user", "x"), false)
	require.False(t, handled)
}

func TestPlain_ReloadsOnChange(t *testing.T) {
	defer goleak.VerifyNone(t)
	old := PlainReloadInterval
	PlainReloadInterval = 10 * time.Millisecond
	defer func() { PlainReloadInterval = old }()
	path := filepath.Join(t.TempDir(), "plain_acl.yml")
	require.NoError(t, os.WriteFile(path, []byte(plainYAML), 0o600))
	p, err := loadPlainACL(path, zerolog.Nop())
	require.NoError(t, err)
	defer p.close()
	req := func() *codec.Command {
		return signed(codec.RequestSendMessageV2, map[string]string{"a": "PG", "b": "topicA"}, nil, "RocketMQ1", "12345678")
	}
	_, err = p.check(addr("127.0.0.1"), req(), true)
	require.Error(t, err)
	// A broken file keeps the old rules; a fixed one takes over.
	require.NoError(t, os.WriteFile(path, []byte("accounts: [ {accessKey: x"), 0o600))
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(plainYAML, "topicA=DENY", "topicA=PUB", 1)), 0o600))
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err = p.check(addr("127.0.0.1"), req(), true); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "reload not seen: %v", err)
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPlain_AddrRules(t *testing.T) {
	for _, c := range []struct {
		rule, ip string
		want     bool
	}{
		{"", "1.2.3.4", false}, {"*", "1.2.3.4", true}, {"1.2.3.*", "1.2.3.9", true}, {"1.2.3.*", "1.2.4.9", false},
		{"1.2.3.1-10", "1.2.3.10", true}, {"1.2.3.1-10", "1.2.3.11", false}, {"1.2.3.{1,5}", "1.2.3.5", true},
		{"1.2.3.4,5.6.7.8", "5.6.7.8", true}, {"1.2.3.4", "1.2.3.4", true},
	} {
		m, err := parseAddrMatcher(c.rule)
		require.NoError(t, err, c.rule)
		require.Equal(t, c.want, m.match(c.ip), "%s vs %s", c.rule, c.ip)
	}
}
