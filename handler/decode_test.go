package handler_test

// Protocol decoding / response layout scenarios (docs/SCENARIOS.md DEC-*).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestDEC01_MixedNormalAndRetryLayout: one POP answer holding normal and
// retry messages parses with the Java client's algorithm (parsePop checks
// the invariants) and every derived handle acks.
func TestDEC01_MixedNormalAndRetryLayout(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 2, "r", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 3000})
	require.Len(t, ms, 2)
	h.advance(4 * time.Second)
	h.reviveNow()
	sendN(t, c, "T", 0, 3, "n", sendOpts{})

	var mixed []popped
	for i := 0; i < 10 && mixed == nil; i++ {
		resp, got := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000})
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		flags := map[codec.RetryFlag]int{}
		for _, m := range got {
			flags[m.handle.RetryFlag]++
		}
		require.Len(t, got, 5, "everything comes in one answer")
		if flags[codec.RetryFlagNormal] == 3 && flags[codec.RetryFlagV2] == 2 {
			mixed = got
		}
		hdr, err := codec.DecodePopMessageResponseHeader(resp.ExtFields)
		require.NoError(t, err)
		require.Zero(t, hdr.RestNum)
	}
	require.NotNil(t, mixed)
	for _, m := range mixed {
		require.Equal(t, "T", m.m.Topic)
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m), "%s", m.raw)
	}
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 61*time.Second)))
}

// TestDEC03_HeaderRobustness: missing or odd POP header fields get
// deterministic answers and no request stays parked.
func TestDEC03_HeaderRobustness(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	base := popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000}
	code := func(a popArgs, edit func(*codec.Command)) int32 {
		req := a.request()
		if edit != nil {
			edit(req)
		}
		return call(t, c, req).Code
	}
	del := func(k string) func(*codec.Command) { return func(r *codec.Command) { delete(r.ExtFields, k) } }
	set := func(k, v string) func(*codec.Command) { return func(r *codec.Command) { r.ExtFields[k] = v } }

	require.Equal(t, codec.PollingTimeout, code(base, del("bornTime")), "(a) no bornTime")
	require.Equal(t, codec.PollingTimeout, code(base, del("pollTime")), "(b) no pollTime")
	require.Equal(t, codec.PollingTimeout, code(base, set("order", "true")), "(c) orderly POP of an empty queue")
	require.Equal(t, codec.PollingTimeout, code(base, set("order", "True")), "(c) booleans are case-insensitive")
	require.Equal(t, codec.PollingTimeout, code(base, set("order", "yes")), "(c) anything else is false")
	big := base
	big.max = 33
	require.Equal(t, codec.InvalidParameter, code(big, nil), "(d) maxMsgNums 33")
	zero := base
	zero.max = 0
	require.Equal(t, codec.InvalidParameter, code(zero, nil), "(d) maxMsgNums 0")
	q := base
	q.queueID = 2
	require.Equal(t, codec.InvalidParameter, code(q, nil), "(e) queueId ≥ readQueueNums")
	q.queueID = -2
	require.Equal(t, codec.InvalidParameter, code(q, nil), "(e) queueId -2")
	inv := base
	inv.invisible = 0
	require.Equal(t, codec.PollingTimeout, code(inv, nil), "(f) invisibleTime 0 is accepted")
	inv.invisible = -1
	require.Equal(t, codec.InvalidParameter, code(inv, nil), "(f) negative invisibleTime")
	nt := base
	nt.topic = "NOPE"
	require.Equal(t, codec.TopicNotExist, code(nt, nil), "(g) unknown topic")
	ng := base
	ng.group = "never-seen-group"
	require.Equal(t, codec.PollingTimeout, code(ng, nil), "(g) unknown groups are served (auto-created)")
	require.Equal(t, codec.SystemError, code(base, del("consumerGroup")), "missing required field")
	require.Equal(t, codec.SystemError, code(base, set("maxMsgNums", "x")), "unparsable field")
	sql := base
	sql.exp, sql.expType = "a > 1", "SQL92"
	require.Equal(t, codec.PollingTimeout, code(sql, nil), "SQL92 served (--enable-property-filter)")
	sql.exp = "a >"
	require.Equal(t, codec.SubscriptionParseFailed, code(sql, nil), "SQL92 that does not compile")
	bad := base
	bad.exp, bad.expType = "a", "XPATH"
	require.Equal(t, codec.SubscriptionParseFailed, code(bad, nil))
	old := base
	old.bornTime = time.Now().UnixMilli() - 10000
	old.poll = 1000
	require.Equal(t, codec.PollingTimeout, code(old, nil), "timeout too much")

	resp := call(t, c, base.request())
	hdr, err := codec.DecodePopMessageResponseHeader(resp.ExtFields)
	require.NoError(t, err, "the four numeric fields are always present")
	require.EqualValues(t, 30000, hdr.InvisibleTime)
	require.Zero(t, h.b().Polls.ParkedCount())
	require.Zero(t, h.b().Svc.HeldLocks())
}
