package handler_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// checkClient sends CHECK_CLIENT_CONFIG with the Java client's body for
// one subscription (sub nil: no subscriptionData).
func checkClient(t *testing.T, c *client.Conn, sub *codec.SubscriptionData) *codec.Command {
	t.Helper()
	body, err := json.Marshal(codec.CheckClientRequestBody{ClientID: "10.0.0.1@sql", Group: "GS", SubscriptionData: sub})
	require.NoError(t, err)
	return call(t, c, codec.NewRequest(codec.RequestCheckClientConfig, 0, nil, body))
}

// TestCheckClientConfig: CHECK_CLIENT_CONFIG answers SUCCESS for TAG and
// for an SQL92 selector that compiles, SUBSCRIPTION_PARSE_FAILED with the
// position for one that does not, SYSTEM_ERROR for a body that is not
// JSON; with --enable-property-filter off, SYSTEM_ERROR with Java's
// remark for SQL92 while TAG still passes.
func TestCheckClientConfig(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	sql := func(exp string) *codec.SubscriptionData {
		return &codec.SubscriptionData{Topic: "T", SubString: exp, ExpressionType: "SQL92"}
	}
	requireCode(t, checkClient(t, c, sql("a > 5 AND b = 'x'")), codec.Success, "")
	requireCode(t, checkClient(t, c, sql("TAGS IN ('a','b') AND KEYS CONTAINS 'k'")), codec.Success, "")
	requireCode(t, checkClient(t, c, &codec.SubscriptionData{Topic: "T", SubString: "TagA || TagB", ExpressionType: "TAG"}), codec.Success, "")
	requireCode(t, checkClient(t, c, nil), codec.Success, "")
	requireCode(t, call(t, c, codec.NewRequest(codec.RequestCheckClientConfig, 0, nil, nil)), codec.Success, "")

	resp := checkClient(t, c, sql("a > 5 AND"))
	require.Equal(t, codec.SubscriptionParseFailed, resp.Code)
	require.Equal(t, "SQL92 expression: line 1, column 10: unexpected end of expression, expecting a literal, a property name, '(', '+', '-' or NOT", resp.Remark)
	resp = checkClient(t, c, sql("a = NULL"))
	require.Equal(t, codec.SubscriptionParseFailed, resp.Code)
	require.Contains(t, resp.Remark, "'NULL' cannot be compared")
	resp = checkClient(t, c, sql(""))
	require.Equal(t, codec.SubscriptionParseFailed, resp.Code, "an empty selector does not compile, as in Java")
	resp = checkClient(t, c, &codec.SubscriptionData{Topic: "T", SubString: "x", ExpressionType: "XPATH"})
	require.Equal(t, codec.SubscriptionParseFailed, resp.Code)

	resp = call(t, c, codec.NewRequest(codec.RequestCheckClientConfig, 0, nil, []byte("{not json")))
	require.Equal(t, codec.SystemError, resp.Code)
	require.True(t, strings.Contains(resp.Remark, "check client config"), resp.Remark)

	off := startHarness(t, func(cfg *conf.Config) { cfg.EnablePropertyFilter = false })
	oc := off.dial()
	requireCode(t, checkClient(t, oc, sql("a > 5")), codec.SystemError, "The broker does not support consumer to filter message by SQL92")
	requireCode(t, checkClient(t, oc, &codec.SubscriptionData{Topic: "T", SubString: "*", ExpressionType: "TAG"}), codec.Success, "")
}

// TestSQL92OverRemoting: messages sent with user properties over
// SEND_MESSAGE_V2 are popped with an SQL92 selector (only the matching
// ones, the others consumed), and pulled with the SQL92 subscription a
// HEART_BEAT registered (PULL without a subscription in the request).
func TestSQL92OverRemoting(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TS", 1)
	c := h.dial()
	for i, p := range []map[string]string{
		{"a": "7", "b": "x"}, {"a": "3", "b": "x"}, {"a": "9"}, {"a": "8", "b": "x"},
	} {
		send(t, c, "TS", 0, "m"+string(rune('0'+i)), sendOpts{props: p, tag: "TagA"})
	}
	ms := popAll(t, c, popArgs{group: "GP", topic: "TS", queueID: -1, max: 32, invisible: 60_000,
		expType: "SQL92", exp: "a > 5 AND b = 'x' AND TAGS = 'TagA'"}, 2)
	require.Equal(t, []string{"m0", "m3"}, bodies(ms))
	require.Equal(t, int64(4), committedOffset(h, "GP", "TS", 0), "rejected messages are consumed")

	hb := codec.HeartbeatData{ClientID: "10.0.0.1@sql"}
	cd := hbConsumer("GPull", "TS")
	cd.SubscriptionDataSet[0].ExpressionType, cd.SubscriptionDataSet[0].SubString = "SQL92", "a BETWEEN 7 AND 9"
	hb.ConsumerDataSet = []codec.ConsumerData{cd}
	requireCode(t, beat(t, c, hb), codec.Success, "")
	r := pull(t, c, pullReqRegistered("GPull", "TS", 0, 0, 32, 0))
	require.Equal(t, codec.Success, r.code)
	require.Equal(t, []string{"m0", "m2", "m3"}, bodiesOf(r.msgs))
}

// TestSQL92OnRetryCopy: a revived copy keeps its properties, so an SQL92
// POP gets its own message back from the retry topic (reconsumeTimes 1),
// while a revived message its selector rejects is not delivered to it.
func TestSQL92OnRetryCopy(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "hit", sendOpts{props: map[string]string{"n": "7"}})
	send(t, c, "T", 0, "miss", sendOpts{props: map[string]string{"n": "1"}})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 3000})
	require.Len(t, ms, 2)
	h.advance(4 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000, expType: "SQL92", exp: "n > 5"}, 5)
	require.Equal(t, []string{"hit"}, bodies(got))
	require.Equal(t, int32(1), got[0].m.ReconsumeTimes)
}
