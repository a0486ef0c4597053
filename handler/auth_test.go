package handler_test

// Protocol tests of authentication and authorization on a real
// stack: requests signed as RocketMQ's AclClientRPCHook signs them
// (auth.Sign), answers compared with a 5.5 broker's.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/remoting/logtest"
	"github.com/popshim/popshim/stack"
)

const (
	adminAK = "rocketmq-admin"
	adminSK = "admin-secret-1"
)

// signAs adds AccessKey and Signature to req as AclClientRPCHook does
// (client.SignRequest) and returns req.
func signAs(req *codec.Command, ak, sk string) *codec.Command {
	client.SignRequest(req, ak, sk)
	return req
}

func authHarness(t *testing.T, mutate func(*conf.Config)) *harness {
	return startHarness(t, func(c *conf.Config) {
		c.AuthEnabled = true
		c.AuthAdminUser, c.AuthAdminPassword = adminAK, adminSK
		if mutate != nil {
			mutate(c)
		}
	})
}

// adminCall sends an AUTH_* request signed by the super user and returns
// the answer.
func adminCall(t *testing.T, c *client.Conn, code int32, ext map[string]string, body any) *codec.Command {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		b, err = json.Marshal(body)
		require.NoError(t, err)
	}
	return call(t, c, signAs(codec.NewRequest(code, 0, ext, b), adminAK, adminSK))
}

func requireCode(t *testing.T, resp *codec.Command, code int32, remark string) {
	t.Helper()
	require.Equal(t, code, resp.Code, "remark %q", resp.Remark)
	if remark != "" {
		require.Equal(t, remark, resp.Remark)
	}
}

func TestAuth_AuthenticationRefusesWhatJavaRefuses(t *testing.T) {
	h := authHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	ok := signAs(sendReq("T", 0, []byte("m1"), sendOpts{}), adminAK, adminSK)
	requireCode(t, call(t, c, ok), codec.Success, "")

	requireCode(t, call(t, c, sendReq("T", 0, []byte("x"), sendOpts{})), codec.NoPermission, "username cannot be null.")
	requireCode(t, call(t, c, signAs(sendReq("T", 0, []byte("x"), sendOpts{}), adminAK, "wrong")), codec.NoPermission, "check signature failed.")
	requireCode(t, call(t, c, signAs(sendReq("T", 0, []byte("x"), sendOpts{}), "ghost", "x")), codec.NoPermission, "User:ghost is not found.")
	tampered := signAs(sendReq("T", 0, []byte("x"), sendOpts{}), adminAK, adminSK)
	tampered.Body = []byte("y")
	requireCode(t, call(t, c, tampered), codec.NoPermission, "check signature failed.")
	noSig := sendReq("T", 0, []byte("x"), sendOpts{})
	noSig.ExtFields[auth.FieldAccessKey] = adminAK
	requireCode(t, call(t, c, noSig), codec.NoPermission, "check signature failed.")
	// HEART_BEAT and codes popshim does not serve: unknown code first, as Java.
	requireCode(t, call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, []byte("{}"))), codec.NoPermission, "username cannot be null.")
	requireCode(t, call(t, c, codec.NewRequest(99999, 0, nil, nil)), codec.RequestCodeNotSupported, "")
	// Nothing but the signed message was stored.
	require.Equal(t, int64(1), h.b().Store.MaxOffset("T", 0))
}

func TestAuth_SecurityTokenIsSigned(t *testing.T) {
	h := authHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	req := sendReq("T", 0, []byte("m"), sendOpts{})
	req.ExtFields[auth.FieldSecurityToken] = "tok"
	requireCode(t, call(t, c, signAs(req, adminAK, adminSK)), codec.Success, "")
	req = signAs(sendReq("T", 0, []byte("m"), sendOpts{}), adminAK, adminSK)
	req.ExtFields[auth.FieldSecurityToken] = "added-after-signing"
	requireCode(t, call(t, c, req), codec.NoPermission, "check signature failed.")
}

func TestAuth_WhitelistSkipsAuthentication(t *testing.T) {
	h := authHarness(t, func(c *conf.Config) { c.AuthWhitelist = "34, 105" })
	c := h.dial()
	hb := codec.HeartbeatData{ClientID: "127.0.0.1@x"}
	body, err := json.Marshal(hb)
	require.NoError(t, err)
	requireCode(t, call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, body)), codec.Success, "")
	requireCode(t, call(t, c, codec.NewRequest(codec.RequestGetBrokerRuntimeInfo, 0, nil, nil)), codec.NoPermission, "username cannot be null.")
}

// A normal user made with AUTH_CREATE_USER and given an ACL with
// AUTH_CREATE_ACL may produce to its topic and POP, ACK and CHANGE in its
// group, and nothing else; the user and ACL survive a restart.
func TestAuth_PoliciesGatePopAckChange(t *testing.T) {
	h := authHarness(t, nil)
	h.createTopic("T", 1)
	h.createTopic("Other", 1)
	c := h.dial()
	requireCode(t, adminCall(t, c, auth.RequestCreateUser, map[string]string{"username": "app"},
		auth.User{Password: "app-secret"}), codec.Success, "")
	requireCode(t, adminCall(t, c, auth.RequestCreateUser, map[string]string{"username": "app"},
		auth.User{Password: "x"}), codec.NoPermission, "The user is existed")
	acl := auth.AclInfo{Subject: "User:app", Policies: []auth.PolicyInfo{{Entries: []auth.EntryInfo{
		{Resource: "Topic:T", Actions: []string{"Pub", "Sub"}, Decision: "Allow"},
		{Resource: "Group:G", Actions: []string{"Sub"}, Decision: "Allow"},
		{Resource: "Group:Gdeny", Actions: []string{"Sub"}, Decision: "Deny"},
	}}}}
	requireCode(t, adminCall(t, c, auth.RequestCreateACL, map[string]string{"subject": "User:app"}, acl), codec.Success, "")

	h.restart()
	c = h.dial()
	as := func(req *codec.Command) *codec.Command { return call(t, c, signAs(req, "app", "app-secret")) }
	requireCode(t, as(sendReq("T", 0, []byte("m"), sendOpts{})), codec.Success, "")
	requireCode(t, as(sendReq("Other", 0, []byte("m"), sendOpts{})), codec.NoPermission,
		"User:app has no permission to access Topic:Other from 127.0.0.1, no matched policies.")
	requireCode(t, as(popArgs{group: "Gdeny", topic: "T", max: 1, invisible: 60000}.request()), codec.NoPermission,
		"User:app has no permission to access Group:Gdeny from 127.0.0.1, the decision is deny.")
	resp := as(popArgs{group: "G", topic: "T", max: 1, invisible: 60000}.request())
	requireCode(t, resp, codec.Success, "")
	ms := parsePop(t, resp)
	require.Len(t, ms, 1)
	requireCode(t, as(ackReq("Gdeny", "T", ms[0])), codec.NoPermission, "")
	chg := as(changeReq("G", "T", ms[0], 60000))
	requireCode(t, chg, codec.Success, "")
	requireCode(t, as(ackReq("G", "T", ms[0])), codec.Success, "")
	// Admin codes need Cluster Update: refused for the normal user.
	requireCode(t, as(codec.NewRequest(auth.RequestCreateUser, 0, map[string]string{"username": "x"}, []byte(`{"password":"p"}`))),
		codec.NoPermission, "User:app has no permission to access Cluster:ClusterPop from 127.0.0.1, no matched policies.")
	// mqadmin listUser / listAcl as the admin.
	resp = adminCall(t, c, auth.RequestListUser, map[string]string{"filter": "ap"}, nil)
	var users []auth.User
	require.NoError(t, json.Unmarshal(resp.Body, &users))
	require.Equal(t, []auth.User{{Username: "app", Password: "app-secret", Type: "Normal", Status: "enable"}}, users)
	resp = adminCall(t, c, auth.RequestListACL, map[string]string{"subjectFilter": "app"}, nil)
	var acls []auth.AclInfo
	require.NoError(t, json.Unmarshal(resp.Body, &acls))
	require.Len(t, acls, 1)
	require.Len(t, acls[0].Policies[0].Entries, 3)
	// Deleting the user refuses it at once.
	requireCode(t, adminCall(t, c, auth.RequestDeleteUser, map[string]string{"username": "app"}, nil), codec.Success, "")
	requireCode(t, as(sendReq("T", 0, []byte("m"), sendOpts{})), codec.NoPermission, "User:app is not found.")
}

// The name-server port checks too, with GET_ROUTEINFO_BY_TOPIC asking
// Pub|Sub|Get on the topic.
func TestAuth_NameServerPort(t *testing.T) {
	h := authHarness(t, func(c *conf.Config) { c.NamesrvListen = "127.0.0.1:0" })
	h.createTopic("T", 1)
	ns := dialAddr(t, h.st.NamesrvAddr())
	route := func() *codec.Command {
		return codec.NewRequest(codec.RequestGetRouteInfoByTopic, 0, map[string]string{"topic": "T"}, nil)
	}
	requireCode(t, call(t, ns, route()), codec.NoPermission, "username cannot be null.")
	requireCode(t, call(t, ns, signAs(route(), adminAK, adminSK)), codec.Success, "")
	c := h.dial()
	requireCode(t, adminCall(t, c, auth.RequestCreateUser, map[string]string{"username": "reader"},
		auth.User{Password: "reader-secret"}), codec.Success, "")
	requireCode(t, call(t, ns, signAs(route(), "reader", "reader-secret")), codec.NoPermission,
		"User:reader has no permission to access Topic:T from 127.0.0.1, no matched policies.")
	requireCode(t, adminCall(t, c, auth.RequestCreateACL, map[string]string{"subject": "User:reader"},
		auth.AclInfo{Policies: []auth.PolicyInfo{{Entries: []auth.EntryInfo{{Resource: "Topic:*", Actions: []string{"Sub"}, Decision: "Allow"}}}}}),
		codec.Success, "")
	requireCode(t, call(t, ns, signAs(route(), "reader", "reader-secret")), codec.Success, "")
}

// Secrets stay out of the log (debug level, with refusals logged) and out
// of GET_BROKER_CONFIG.
func TestAuth_SecretsNotLoggedNorShown(t *testing.T) {
	var logBuf logtest.Buffer
	cfg := popConfig(t.TempDir())
	cfg.AuthEnabled = true
	cfg.AuthAdminUser, cfg.AuthAdminPassword = adminAK, adminSK
	cfg.LogLevel = "debug"
	st, err := stack.StartStack(cfg, zerolog.New(&logBuf).Level(zerolog.DebugLevel))
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close(context.Background())) }()
	c := dialAddr(t, st.BrokerAddr())
	bad := signAs(codec.NewRequest(codec.RequestGetBrokerConfig, 0, nil, nil), adminAK, "wrong-secret")
	requireCode(t, call(t, c, bad), codec.NoPermission, "check signature failed.")
	resp := call(t, c, signAs(codec.NewRequest(codec.RequestGetBrokerConfig, 0, nil, nil), adminAK, adminSK))
	requireCode(t, resp, codec.Success, "")
	require.NotContains(t, string(resp.Body), adminSK)
	require.Contains(t, string(resp.Body), "auth-admin-user="+adminAK)
	log := logBuf.String()
	require.Contains(t, log, "request refused", "refusals are logged at debug level")
	for _, secret := range []string{adminSK, "wrong-secret", bad.ExtFields[auth.FieldSignature]} {
		require.NotContains(t, log, secret)
	}
}

// --acl-file alone: an ACL 1.0 account produces to the topic its
// topicPerms grant and is refused elsewhere as a 1.0 broker refused it
// (SYSTEM_ERROR with the AclException text); an unknown AccessKey too.
func TestAuth_PlainACLFileOnTheWire(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the file watcher stops with the stack
	path := filepath.Join(t.TempDir(), "plain_acl.yml")
	require.NoError(t, os.WriteFile(path, []byte(`accounts:
  - accessKey: legacy-app
    secretKey: legacy-secret
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - T=PUB
`), 0o600))
	h := startHarness(t, func(c *conf.Config) { c.ACLFile = path })
	h.createTopic("T", 1)
	h.createTopic("U", 1)
	c := h.dial()
	requireCode(t, call(t, c, signAs(sendReq("T", 0, []byte("m"), sendOpts{}), "legacy-app", "legacy-secret")), codec.Success, "")
	requireCode(t, call(t, c, signAs(sendReq("U", 0, []byte("m"), sendOpts{}), "legacy-app", "legacy-secret")), codec.SystemError,
		"org.apache.rocketmq.acl.common.AclException: No default permission for topic:U")
	requireCode(t, call(t, c, signAs(sendReq("T", 0, []byte("m"), sendOpts{}), "legacy-app", "wrong")), codec.SystemError,
		"org.apache.rocketmq.acl.common.AclException: Check signature failed for accessKey=legacy-app")
	requireCode(t, call(t, c, signAs(sendReq("T", 0, []byte("m"), sendOpts{}), "someone", "x")), codec.SystemError,
		"org.apache.rocketmq.acl.common.AclException: No acl config for someone")
	require.Equal(t, int64(1), h.b().Store.MaxOffset("T", 0))
	require.Equal(t, int64(0), h.b().Store.MaxOffset("U", 0))
	_ = c.Close()
	h.stop()
}
