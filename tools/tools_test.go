package tools

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/stack/stacktest"
)

// startBroker runs an in-process popshim (stacktest.Start) and returns its
// embedded name server's address.
func startBroker(t *testing.T) string {
	t.Helper()
	return stacktest.StartEdited(t, nil).NamesrvAddr()
}

// closedPort returns a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// fingerprint is what a consumer must get back of a sent message.
type fingerprint struct {
	MsgID, Body, Tags, Keys string
	QueueID                 int32
	QueueOffset             int64
}

func sortPrints(p []fingerprint) []fingerprint {
	sort.Slice(p, func(i, j int) bool { return p[i].MsgID < p[j].MsgID })
	return p
}

// TestSendThenConsume sends two kinds of messages to a topic nobody created
// (so the route falls back to TBW102 and the first SEND creates it), then
// pops and acks them: what is consumed is what was sent, message by
// message, and a second consume of the group gets nothing.
func TestSendThenConsume(t *testing.T) {
	ns := startBroker(t)
	ctx := context.Background()
	var sendOut bytes.Buffer
	var want []fingerprint
	for _, kind := range []SendOptions{
		{Count: 6, Body: "hello", Tags: "TagA", Keys: "k1"},
		{Count: 4, Body: "world \u00e9\n", Tags: "TagB", Keys: "k2 k3"},
	} {
		kind.Namesrv, kind.Topic, kind.Out = ns, "SmokeTopic", &sendOut
		res, err := Send(ctx, kind)
		require.NoError(t, err, sendOut.String())
		require.Len(t, res, kind.Count)
		for _, r := range res {
			require.Equal(t, "popshim-a", r.Broker)
			require.Len(t, r.MsgID, 32, "UNIQ_KEY as the Java client lays it out")
			require.NotEmpty(t, r.OffsetMsgID)
			want = append(want, fingerprint{r.MsgID, kind.Body, kind.Tags, kind.Keys, r.QueueID, r.QueueOffset})
		}
	}
	require.Equal(t, 10, strings.Count(sendOut.String(), "SEND_OK msgId="), sendOut.String())
	require.Contains(t, sendOut.String(), "sent 6 messages to SmokeTopic")

	o := NewConsumeOptions()
	var out bytes.Buffer
	o.Namesrv, o.Topic, o.Group, o.Count, o.Timeout, o.Out = ns, "SmokeTopic", "smoke_g", 10, 30*time.Second, &out
	got, err := Consume(ctx, o)
	require.NoError(t, err, out.String())
	var prints []fingerprint
	for _, m := range got {
		require.Equal(t, "SmokeTopic", m.Topic)
		require.Zero(t, m.ReconsumeTimes)
		prints = append(prints, fingerprint{m.MsgID, string(m.Body), m.Tags, m.Keys, m.QueueID, m.QueueOffset})
	}
	require.Equal(t, sortPrints(want), sortPrints(prints))
	require.Equal(t, 10, strings.Count(out.String(), "topic=SmokeTopic queueId="), out.String())
	require.Contains(t, out.String(), `tags=TagB keys=k2 k3 body="world é\n"`)
	require.Contains(t, out.String(), "consumed 10 messages from SmokeTopic as group smoke_g")

	// The acks are durable: the group has nothing left, even after the
	// invisible time a popped but unacked message would come back after.
	o.Count, o.Timeout, o.Out = 1, 2*time.Second, &out
	again, err := Consume(ctx, o)
	require.Empty(t, again)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "consumed 0 of 1 messages from SmokeTopic as group smoke_g before --timeout 2s")
}

// TestConsumeOneQueueAndTags pops a single queue with a TAG filter: only
// that queue's messages of that tag arrive.
func TestConsumeOneQueueAndTags(t *testing.T) {
	ns := startBroker(t)
	ctx := context.Background()
	sent := map[int32][]string{} // queueId → msgIds of TagB
	for _, tag := range []string{"TagA", "TagB"} {
		res, err := Send(ctx, SendOptions{Namesrv: ns, Topic: "FilterTopic", Count: 8, Tags: tag})
		require.NoError(t, err)
		for _, r := range res {
			if tag == "TagB" {
				sent[r.QueueID] = append(sent[r.QueueID], r.MsgID)
			}
		}
	}
	var q int32 = -1
	for id := range sent {
		q = id
		break
	}
	require.GreaterOrEqual(t, q, int32(0))
	o := NewConsumeOptions()
	o.Namesrv, o.Topic, o.Group, o.QueueID, o.Tags, o.Count = ns, "FilterTopic", "filter_g", q, "TagB", len(sent[q])
	got, err := Consume(ctx, o)
	require.NoError(t, err)
	var ids []string
	for _, m := range got {
		require.Equal(t, q, m.QueueID)
		require.Equal(t, "TagB", m.Tags)
		ids = append(ids, m.MsgID)
	}
	require.ElementsMatch(t, sent[q], ids)
}

// TestConsumeWaitsForTheTopic starts the consumer before the topic exists,
// as the README's two terminals may: it waits for the route, says so, and
// consumes what the producer sends afterwards.
func TestConsumeWaitsForTheTopic(t *testing.T) {
	ns := startBroker(t)
	ctx := context.Background()
	var notes bytes.Buffer
	type result struct {
		got []Consumed
		err error
	}
	done := make(chan result, 1)
	o := NewConsumeOptions()
	o.Namesrv, o.Topic, o.Group, o.Count, o.Notes = ns, "LateTopic", "late_g", 3, &notes
	go func() {
		got, err := Consume(ctx, o)
		done <- result{got, err}
	}()
	time.Sleep(700 * time.Millisecond) // at least one TOPIC_NOT_EXIST answer
	_, err := Send(ctx, SendOptions{Namesrv: ns, Topic: "LateTopic", Count: 3, Body: "late"})
	require.NoError(t, err)
	r := <-done
	require.NoError(t, r.err)
	require.Len(t, r.got, 3)
	require.Equal(t, "topic LateTopic does not exist yet; waiting for the first SEND to create it\n", notes.String())
}

// TestCountNotReached: fewer messages than --count before --timeout is an
// error that says how many were consumed; those were acked and returned.
func TestCountNotReached(t *testing.T) {
	ns := startBroker(t)
	ctx := context.Background()
	_, err := Send(ctx, SendOptions{Namesrv: ns, Topic: "ShortTopic", Count: 2})
	require.NoError(t, err)
	o := NewConsumeOptions()
	o.Namesrv, o.Topic, o.Group, o.Count, o.Timeout = ns, "ShortTopic", "short_g", 3, 2*time.Second
	o.PollTime = time.Minute // longer than any plausible slowness of this machine: only --timeout can end it
	start := time.Now()
	got, err := Consume(ctx, o)
	require.Len(t, got, 2)
	require.ErrorContains(t, err, "consumed 2 of 3 messages from ShortTopic as group short_g before --timeout 2s")
	require.Less(t, time.Since(start), o.PollTime/2, "--timeout bounds the 1-minute long polls too")

	// A topic that never appears times out the same way.
	o.Topic, o.Group = "NeverTopic", "never_g"
	got, err = Consume(ctx, o)
	require.Empty(t, got)
	require.ErrorContains(t, err, "consumed 0 of 3 messages from NeverTopic as group never_g before --timeout 2s: topic NeverTopic does not exist")
}

// TestNoBroker: nothing listening at --namesrv fails at once with a message
// that names the address and says what to check.
func TestNoBroker(t *testing.T) {
	addr := closedPort(t)
	ctx := context.Background()
	start := time.Now()
	_, err := Send(ctx, SendOptions{Namesrv: addr, Count: 1})
	require.ErrorContains(t, err, "cannot reach the name server at "+addr+" (is popshim running?")
	require.ErrorContains(t, err, "connection refused")
	o := NewConsumeOptions()
	o.Namesrv = addr
	_, err = Consume(ctx, o)
	require.ErrorContains(t, err, "cannot reach the name server at "+addr)
	require.Less(t, time.Since(start), 5*time.Second)

	_, err = Send(ctx, SendOptions{Namesrv: addr, Count: -1})
	require.ErrorContains(t, err, "--count must be at least 1")
	require.False(t, errors.Is(err, context.DeadlineExceeded))
}
