package broker_test

import (
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// propMsg is one message to store: body and properties.
type propMsg struct {
	body  string
	props map[string]string
}

// pmsg builds a propMsg from body and name, value pairs.
func pmsg(body string, kv ...string) propMsg {
	m := propMsg{body: body, props: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		m.props[kv[i]] = kv[i+1]
	}
	return m
}

// appendProps stores one record per message, with its properties, to
// (topic, queueID) through the writer and waits until they are durable.
func appendProps(t *testing.T, f *brokertest.Fixture, topic string, queueID int32, msgs ...propMsg) {
	t.Helper()
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	var recs [][]byte
	for _, m := range msgs {
		props, err := codec.EncodeProperties(m.props)
		if err != nil {
			t.Fatal(err)
		}
		now := f.Broker.Now()
		rec, err := codec.AppendMessage(nil, &codec.MessageExt{
			Message: codec.Message{Topic: topic, Body: []byte(m.body), Properties: props},
			QueueID: queueID, BornTimestamp: now, StoreTimestamp: now, BornHost: host, StoreHost: host,
		})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	err := brokertest.Await0(t, func(done func(error)) {
		op := &batch.Op{Lane: batch.LaneProduce, Bytes: 64, Done: done,
			Apply: func(tx *popstore.Txn) error {
				for _, rec := range recs {
					if _, _, err := tx.AppendMessage(topic, queueID, rec); err != nil {
						return err
					}
				}
				return nil
			}}
		if err := f.Writer.Submit(op); err != nil {
			done(err)
		}
	})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
}

// sqlPopReq is a POP of every queue of topic for group with an SQL92
// subscription, no long poll.
func sqlPopReq(group, topic, sql string, max int32) broker.PopRequest {
	r := popReq(group, topic, max)
	r.ExpType, r.Exp = "SQL92", sql
	return r
}

// sqlPop runs r and returns the bodies it got; POLLING_TIMEOUT is no
// message.
func sqlPop(t *testing.T, f *brokertest.Fixture, r broker.PopRequest) []string {
	t.Helper()
	res, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(r, done) })
	var e *broker.Error
	if errors.As(err, &e) && e.Code == codec.PollingTimeout {
		return nil
	}
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	return bodiesOf(t, res.Body)
}

// TestCorePopSQL92 pops with a selector: only matching messages come back
// (numeric and string comparisons, NULL for an absent property, an
// evaluation error for a value that is not a number), the rejected ones
// are consumed (the offset moves past them) and never delivered later,
// and a group without a filter still gets everything.
func TestCorePopSQL92(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicS", 1)
	appendProps(t, f, "TopicS", 0,
		pmsg("m0", "a", "7", "b", "x"),
		pmsg("m1", "a", "3", "b", "x"),
		pmsg("m2", "a", "9"),
		pmsg("m3", "a", "6", "b", "y"),
		pmsg("m4", "a", "six", "b", "x"),
		pmsg("m5", "b", "x"),
		pmsg("m6", "a", "12", "b", "x", "TAGS", "TagA"),
		pmsg("m7"),
	)
	sel := "a > 5 AND b = 'x'"
	var got []string
	for range 4 {
		got = append(got, sqlPop(t, f, sqlPopReq("GroupS", "TopicS", sel, 1))...)
	}
	if !slices.Equal(got, []string{"m0", "m6"}) {
		t.Fatalf("popped %v, want [m0 m6]", got)
	}
	if off, ok := f.Broker.Store.ConsumerOffset("GroupS", "TopicS", 0); !ok || off != 8 {
		t.Fatalf("consume offset %d %v, want 8: rejected messages are consumed", off, ok)
	}
	// TAGS is a property like any other.
	if b := sqlPop(t, f, sqlPopReq("GroupTag", "TopicS", "TAGS = 'TagA' OR a IS NULL", 32)); !slices.Equal(b, []string{"m5", "m6", "m7"}) {
		t.Fatalf("TAGS selector popped %v, want [m5 m6 m7]", b)
	}
	if b := sqlPop(t, f, popReq("GroupAll", "TopicS", 32)); len(b) != 8 {
		t.Fatalf("unfiltered group popped %v, want all 8", b)
	}
	// Empty SQL92 expression: every message (PopMessageProcessor's "*").
	if b := sqlPop(t, f, sqlPopReq("GroupEmpty", "TopicS", " ", 32)); len(b) != 8 {
		t.Fatalf("empty selector popped %v, want all 8", b)
	}
}

// TestCorePopSQL92ScanBound: a selector that rejects more messages than
// one scan reads (maxScanPerQueue) still finds the match behind them in
// one POP, the scan going on instead of parking, and commits past what it
// rejected.
func TestCorePopSQL92ScanBound(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	f.Broker.Settings.MaxScanPerQueue = 50
	createTopic(t, f, "TopicB", 1)
	var msgs []propMsg
	for i := range 180 {
		msgs = append(msgs, pmsg("skip"+strconv.Itoa(i), "n", strconv.Itoa(i)))
	}
	msgs = append(msgs, pmsg("wanted", "n", "180", "hit", "1"))
	appendProps(t, f, "TopicB", 0, msgs...)
	if b := sqlPop(t, f, sqlPopReq("GroupB", "TopicB", "hit = 1", 4)); !slices.Equal(b, []string{"wanted"}) {
		t.Fatalf("popped %v, want [wanted]", b)
	}
	if off, _ := f.Broker.Store.ConsumerOffset("GroupB", "TopicB", 0); off != 181 {
		t.Fatalf("consume offset %d, want 181", off)
	}
	if b := sqlPop(t, f, sqlPopReq("GroupB", "TopicB", "hit = 1", 4)); b != nil {
		t.Fatalf("second pop %v, want nothing", b)
	}
}

// TestCorePopSQL92LongPoll parks two POPs of one group with different
// selectors; an append of a message only the second one matches wakes
// that one (the probe reads the pending message's properties), the first
// stays parked until a message for it arrives.
func TestCorePopSQL92LongPoll(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicL", 1)
	type answer struct {
		who    string
		bodies []string
		err    error
	}
	got := make(chan answer, 4)
	parked := make(chan string, 16)
	start := func(who, sel string) {
		r := sqlPopReq("GroupL", "TopicL", sel, 1)
		r.PollTime = 30_000
		r.OnPark = func() { parked <- who }
		f.Broker.Pop(r, func(res broker.PopResult, err error) {
			var b []string
			if err == nil {
				msgs, derr := codec.DecodeMessages(res.Body)
				if derr != nil {
					err = derr
				}
				for _, m := range msgs {
					b = append(b, string(m.Body))
				}
			}
			got <- answer{who, b, err}
		})
	}
	start("red", "color = 'red'")
	if w := <-parked; w != "red" {
		t.Fatalf("parked %s", w)
	}
	start("blue", "color = 'blue' AND size >= 2")
	if w := <-parked; w != "blue" {
		t.Fatalf("parked %s", w)
	}
	appendProps(t, f, "TopicL", 0, pmsg("b1", "color", "blue", "size", "3"))
	a := <-got
	if a.err != nil || a.who != "blue" || !slices.Equal(a.bodies, []string{"b1"}) {
		t.Fatalf("first answer %+v, want blue with [b1]", a)
	}
	appendProps(t, f, "TopicL", 0, pmsg("r1", "color", "red"))
	a = <-got
	if a.err != nil || a.who != "red" || !slices.Equal(a.bodies, []string{"r1"}) {
		t.Fatalf("second answer %+v, want red with [r1]", a)
	}
	if off, _ := f.Broker.Store.ConsumerOffset("GroupL", "TopicL", 0); off != 2 {
		t.Fatalf("consume offset %d, want 2", off)
	}
}

// TestCorePopSQL92WokenPastRejected parks one POP; a rejected message
// wakes it at worst into a re-check that consumes it and parks again, and
// the matching message after it is what the POP answers.
func TestCorePopSQL92WokenPastRejected(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicW", 1)
	parked := make(chan struct{}, 16)
	r := sqlPopReq("GroupW", "TopicW", "k IN ('yes')", 2)
	r.PollTime = 30_000
	r.OnPark = func() { parked <- struct{}{} }
	type answer struct {
		res broker.PopResult
		err error
	}
	got := make(chan answer, 1)
	f.Broker.Pop(r, func(res broker.PopResult, err error) { got <- answer{res, err} })
	<-parked
	appendProps(t, f, "TopicW", 0, pmsg("no", "k", "no"))
	appendProps(t, f, "TopicW", 0, pmsg("yes", "k", "yes"))
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	if b := bodiesOf(t, a.res.Body); !slices.Equal(b, []string{"yes"}) {
		t.Fatalf("woken pop got %v, want [yes]", b)
	}
}

// sqlPullReq is a PULL of (topic, queue 0) from offset with an SQL92
// subscription in the request.
func sqlPullReq(group, topic, sql string, offset int64) broker.PullRequest {
	r := pullReq(group, topic, 0, offset)
	r.SysFlag |= codec.PullSysFlagSubscription
	r.ExpressionType, r.Subscription = "SQL92", sql
	return r
}

// TestCorePullSQL92 pulls with a selector in the request and, without
// one, with the SQL92 subscription a HEART_BEAT registered; a range
// without a match answers PULL_RETRY_IMMEDIATELY past it.
func TestCorePullSQL92(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicP", 1)
	appendProps(t, f, "TopicP", 0,
		pmsg("p0", "price", "10.5"),
		pmsg("p1", "price", "99.9", "region", "eu"),
		pmsg("p2", "price", "100"),
		pmsg("p3", "region", "eu"),
	)
	res, err := pull(t, f, sqlPullReq("GroupP", "TopicP", "price BETWEEN 10.0 AND 100.0", 0))
	wantPull(t, res, err, codec.Success, "FOUND", 4, 0, 4)
	if b := bodiesOf(t, res.Body); !slices.Equal(b, []string{"p0", "p1", "p2"}) {
		t.Fatalf("pulled %v", b)
	}
	res, err = pull(t, f, sqlPullReq("GroupP", "TopicP", "region = 'us'", 0))
	wantPull(t, res, err, codec.PullRetryImmediately, "NO_MATCHED_MESSAGE", 4, 0, 4)

	f.Broker.Clients.RegisterConsumer(clients.ConsumerRegistration{Group: "GroupHB", ConsumeType: "CONSUME_PASSIVELY",
		MessageModel: "CLUSTERING", Subscriptions: []clients.Subscription{
			{Topic: "TopicP", SubString: "region IS NOT NULL", ExpressionType: "SQL92"}}},
		clients.ClientChannel{ClientID: "127.0.0.1@sql", ConnID: 1})
	r := pullReq("GroupHB", "TopicP", 0, 0)
	r.SysFlag = 0 // as a push consumer pulls: the heartbeat's selector applies
	res, err = pull(t, f, r)
	wantPull(t, res, err, codec.Success, "FOUND", 4, 0, 4)
	if b := bodiesOf(t, res.Body); !slices.Equal(b, []string{"p1", "p3"}) {
		t.Fatalf("pulled with the heartbeat's selector %v, want [p1 p3]", b)
	}
}

// TestCorePullSQL92LongPoll parks a suspendable PULL with a selector; an
// append wakes it and it answers the matching message.
func TestCorePullSQL92LongPoll(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicQ", 1)
	r := sqlPullReq("GroupQ", "TopicQ", "v STARTSWITH 'ok'", 0)
	r.SysFlag |= codec.PullSysFlagSuspend
	r.SuspendTimeoutMillis = 30_000
	got := pullParked(f, r)
	appendProps(t, f, "TopicQ", 0, pmsg("hit", "v", "ok-1"))
	a := <-got
	wantPull(t, a.r, a.err, codec.Success, "FOUND", 1, 0, 1)
	if b := bodiesOf(t, a.r.Body); !slices.Equal(b, []string{"hit"}) {
		t.Fatalf("woken pull %v", b)
	}
}

// TestCoreSQL92Refusals: with --enable-property-filter off, POP and PULL
// refuse SQL92 with SYSTEM_ERROR (1) and Java's remark while TAG works;
// with it on, a selector that does not compile is
// SUBSCRIPTION_PARSE_FAILED (23) naming where.
func TestCoreSQL92Refusals(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.EnablePropertyFilter = false
	f := brokertest.Start(t, cfg, nil)
	createTopic(t, f, "TopicR", 1)
	appendProps(t, f, "TopicR", 0, pmsg("r0", "TAGS", "TagA", "a", "1"))
	const remark = "The broker does not support consumer to filter message by SQL92"
	_, err := brokertest.Await(t, func(done func(broker.PopResult, error)) {
		f.Broker.Pop(sqlPopReq("GroupR", "TopicR", "a = 1", 1), done)
	})
	wantSQLError(t, err, codec.SystemError, remark)
	_, err = pull(t, f, sqlPullReq("GroupR", "TopicR", "a = 1", 0))
	wantSQLError(t, err, codec.SystemError, remark)
	tagged := popReq("GroupR", "TopicR", 1)
	tagged.ExpType, tagged.Exp = "TAG", "TagA"
	if b := sqlPop(t, f, tagged); !slices.Equal(b, []string{"r0"}) {
		t.Fatalf("TAG pop with the flag off: %v", b)
	}
	if e := f.Broker.CheckPropertyFilter("SQL92"); e == nil || e.Code != codec.SystemError || e.Remark != remark {
		t.Fatalf("CheckPropertyFilter = %v", e)
	}

	g := brokertest.Start(t, nil, nil)
	createTopic(t, g, "TopicR", 1)
	for _, sel := range []string{"a >", "a = 1 #", "a > 'x'"} {
		_, err = brokertest.Await(t, func(done func(broker.PopResult, error)) {
			g.Broker.Pop(sqlPopReq("GroupR", "TopicR", sel, 1), done)
		})
		wantSQLError(t, err, codec.SubscriptionParseFailed, "parse the consumer's subscription failed: SQL92 expression: line 1, column ")
		_, err = pull(t, g, sqlPullReq("GroupR", "TopicR", sel, 0))
		wantSQLError(t, err, codec.SubscriptionParseFailed, "parse the consumer's subscription failed: SQL92 expression: line 1, column ")
	}
	if _, e := g.Broker.ParseFilter("XPATH", "a"); e == nil || e.Code != codec.SubscriptionParseFailed {
		t.Fatalf("unknown type: %v", e)
	}
	if e := g.Broker.CheckPropertyFilter("SQL92"); e != nil {
		t.Fatalf("flag on: %v", e)
	}
}

// wantSQLError checks err is a *broker.Error with code and a remark starting
// with prefix.
func wantSQLError(t *testing.T, err error, code int32, prefix string) {
	t.Helper()
	var e *broker.Error
	if !errors.As(err, &e) || e.Code != code || !strings.HasPrefix(e.Remark, prefix) {
		t.Fatalf("err = %v, want code %d remark %q...", err, code, prefix)
	}
}
