package handler_test

// Tests of the --namesrv-addr paths against routeNamesrv, an in-test
// stand-in for an Apache name server (a fixture of the peer: it answers
// REGISTER_BROKER and GET_ROUTEINFO_BY_TOPIC with real route bodies). The
// interop cluster suite runs the same paths against the real one.

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler"
	"github.com/popshim/popshim/remoting"
)

// routeNamesrv answers 105 from a route table and records 103 bodies.
type routeNamesrv struct {
	mu         sync.Mutex
	routes     map[string]codec.TopicRouteData
	fetches    map[string]int
	registered []string      // REGISTER_BROKER bodies, in arrival order
	answered   []string      // REGISTER_BROKER bodies whose answer was sent
	routeDelay time.Duration // before answering 105
	regDelay   time.Duration // before answering 103
	regHang    bool          // never answer 103
}

func (f *routeNamesrv) handle(c remoting.Conn, req *codec.Command) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch req.Code {
	case codec.RequestRegisterBroker:
		body := string(req.Body)
		f.registered = append(f.registered, body)
		if f.regHang {
			return
		}
		go func(d time.Duration) {
			time.Sleep(d)
			f.mu.Lock()
			f.answered = append(f.answered, body)
			f.mu.Unlock()
			resp := codec.NewResponse(req, codec.Success, "")
			resp.SetExt("masterAddr", "")
			_ = c.Reply(resp)
		}(f.regDelay)
	case codec.RequestGetRouteInfoByTopic:
		topic := req.ExtFields["topic"]
		f.fetches[topic]++
		route, ok := f.routes[topic]
		go func(d time.Duration) {
			time.Sleep(d)
			if !ok {
				_ = c.Reply(codec.NewResponse(req, codec.TopicNotExist, handler.NoRouteRemark(topic)))
				return
			}
			resp := codec.NewResponse(req, codec.Success, "")
			resp.Body = codec.AppendTopicRouteData(nil, &route, false)
			_ = c.Reply(resp)
		}(f.routeDelay)
	default:
		_ = c.Reply(codec.NewResponse(req, codec.Success, ""))
	}
}

func (f *routeNamesrv) fetchCount(topic string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetches[topic]
}

func startRouteNamesrv(t *testing.T, f *routeNamesrv) string {
	t.Helper()
	f.fetches = map[string]int{}
	r := remoting.NewRouter()
	for _, code := range []int32{codec.RequestRegisterBroker, codec.RequestUnregisterBroker, codec.RequestGetRouteInfoByTopic} {
		r.Handle(code, f.handle)
	}
	srv := remoting.NewServer(remoting.ServerOptions{Name: "route-namesrv", Addr: "127.0.0.1:0", EventLoops: 1}, r, zerolog.Nop())
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return srv.Addr().String()
}

// twoBrokerRoute is topic on broker-d2 (the stack under test) and
// broker-x with 4 queues each, plus a write-only broker-w.
func twoBrokerRoute() codec.TopicRouteData {
	bd := func(name, addr string) codec.BrokerData {
		return codec.BrokerData{BrokerName: name, Cluster: "ClusterD2", BrokerAddrs: map[int64]string{0: addr}}
	}
	return codec.TopicRouteData{
		BrokerDatas: []codec.BrokerData{bd("broker-x", "127.0.0.1:1"), bd("broker-d2", "127.0.0.1:2"), bd("broker-w", "127.0.0.1:3")},
		QueueDatas: []codec.QueueData{
			{BrokerName: "broker-x", Perm: 6, ReadQueueNums: 4, WriteQueueNums: 4},
			{BrokerName: "broker-d2", Perm: 6, ReadQueueNums: 4, WriteQueueNums: 4},
			{BrokerName: "broker-w", Perm: 2, ReadQueueNums: 4, WriteQueueNums: 4},
		},
	}
}

// assigned lists "brokerName/queueId" of an assignment.
func assigned(a *codec.QueryAssignmentResponseBody) []string {
	var out []string
	for _, x := range a.MessageQueueAssignments {
		out = append(out, x.MessageQueue.BrokerName+"/"+strconv.Itoa(int(x.MessageQueue.QueueID)))
	}
	return out
}

func TestQueryAssignmentOverClusterRoute(t *testing.T) {
	f := &routeNamesrv{routes: map[string]codec.TopicRouteData{"TopicC": twoBrokerRoute()}, routeDelay: 300 * time.Millisecond}
	cfg := d2Config(t.TempDir())
	cfg.NamesrvAddr = startRouteNamesrv(t, f)
	cfg.RegisterInterval = time.Hour
	st := d2Start(t, cfg)
	bc := dialAddr(t, st.BrokerAddr())
	require.Equal(t, codec.Success, d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("TopicC", "4", "4", "6", ""), nil).Code)
	require.Equal(t, codec.Success, d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("TopicL", "2", "2", "6", ""), nil).Code)
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("cA", "GC"))
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("cB", "GC"))

	// Cold cache: several consumers ask at once; one fetch serves them all,
	// and the event loop keeps answering meanwhile (106 overtakes them).
	body, _ := json.Marshal(codec.QueryAssignmentRequestBody{ClientID: "cA", ConsumerGroup: "GC",
		MessageModel: codec.MessageModelCluster, StrategyName: "AVG", Topic: "TopicC"})
	type answer struct {
		resp *codec.Command
		at   time.Time
	}
	answers := make(chan answer, 4)
	for i := 0; i < 4; i++ {
		req := codec.NewRequest(codec.RequestQueryAssignment, 0, nil, body)
		require.NoError(t, bc.InvokeAsync(req, func(resp *codec.Command, err error) {
			assert.NoError(t, err)
			answers <- answer{resp, time.Now()}
		}))
	}
	info := d2Call(t, bc, codec.RequestGetBrokerClusterInfo, nil, nil)
	infoAt := time.Now()
	require.Equal(t, codec.Success, info.Code)
	for i := 0; i < 4; i++ {
		select {
		case a := <-answers:
			require.Equal(t, codec.Success, a.resp.Code, a.resp.Remark)
			assert.True(t, a.at.After(infoAt), "the assignment waited for the name server, the event loop did not")
			out, err := codec.DecodeQueryAssignmentResponseBody(a.resp.Body)
			require.NoError(t, err)
			// Default POP, popShareQueueNum -1: one {-1} per readable broker,
			// sorted by broker name; the write-only broker-w is left out.
			assert.Equal(t, []string{"broker-d2/-1", "broker-x/-1"}, assigned(&out))
		case <-time.After(waitFor):
			t.Fatal("no assignment")
		}
	}
	assert.Equal(t, 1, f.fetchCount("TopicC"), "one fetch per topic in flight")

	// Warm cache: PULL AVG over the 8 readable queues of both brokers.
	require.Equal(t, codec.Success, setMode(t, bc, "TopicC", "GC", "PULL", 0).Code)
	assert.Equal(t, []string{"broker-d2/0", "broker-d2/1", "broker-d2/2", "broker-d2/3"}, assigned(queryAssignment(t, bc, "TopicC", "GC", "cA", "AVG")))
	assert.Equal(t, []string{"broker-x/0", "broker-x/1", "broker-x/2", "broker-x/3"}, assigned(queryAssignment(t, bc, "TopicC", "GC", "cB", "AVG")))
	assert.Equal(t, []string{"broker-d2/1", "broker-d2/3", "broker-x/1", "broker-x/3"}, assigned(queryAssignment(t, bc, "TopicC", "GC", "cB", "AVG_BY_CIRCLE")))
	assert.Nil(t, queryAssignment(t, bc, "TopicC", "GC", "cB", "CONSISTENT_HASH").MessageQueueAssignments)
	// POP with popShareQueueNum 1 and three consumers: cB's AVG share of the
	// 8 queues (3..5) plus cC's (6..7).
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("cC", "GC"))
	require.Equal(t, codec.Success, setMode(t, bc, "TopicC", "GC", "POP", 1).Code)
	assert.Equal(t, []string{"broker-d2/3", "broker-x/0", "broker-x/1", "broker-x/2", "broker-x/3"},
		assigned(queryAssignment(t, bc, "TopicC", "GC", "cB", "AVG")))
	assert.Equal(t, 1, f.fetchCount("TopicC"))

	// The name servers know no route: this broker's own queues if it has the
	// topic, else no list.
	a := queryAssignment(t, bc, "TopicL", "GC", "cA", "AVG")
	assert.Equal(t, []string{"broker-d2/-1"}, assigned(a))
	assert.Nil(t, queryAssignment(t, bc, "NoSuchTopic", "GC", "cA", "AVG").MessageQueueAssignments)
	assert.GreaterOrEqual(t, f.fetchCount("TopicL"), 1)
}

func TestQueryAssignmentNamesrvDown(t *testing.T) {
	// A name server address nobody listens on: registration and route
	// fetches fail at once; QUERY_ASSIGNMENT falls back to own queues.
	cfg := d2Config(t.TempDir())
	cfg.NamesrvAddr = closedAddr(t)
	st := d2Start(t, cfg)
	bc := dialAddr(t, st.BrokerAddr())
	require.Equal(t, codec.Success, d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("TopicD", "2", "2", "6", ""), nil).Code)
	require.Equal(t, codec.Success, setMode(t, bc, "TopicD", "GD", "PULL", 0).Code)
	assert.Equal(t, []string{"broker-d2/0", "broker-d2/1"}, assigned(queryAssignment(t, bc, "TopicD", "GD", "cA", "AVG")))
}

// closedAddr returns a loopback address with nothing listening.
func closedAddr(t *testing.T) string {
	t.Helper()
	srv := remoting.NewServer(remoting.ServerOptions{Name: "closed", Addr: "127.0.0.1:0", EventLoops: 1}, remoting.NewRouter(), zerolog.Nop())
	require.NoError(t, srv.Start())
	addr := srv.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.Stop(ctx))
	return addr
}

func TestCreateTopicRepliesAfterRegistration(t *testing.T) {
	f := &routeNamesrv{routes: map[string]codec.TopicRouteData{}, regDelay: 600 * time.Millisecond}
	cfg := d2Config(t.TempDir())
	cfg.NamesrvAddr = startRouteNamesrv(t, f)
	cfg.RegisterInterval = time.Hour
	st := d2Start(t, cfg)
	eventually(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.answered) >= 1 }, "first registration")
	bc := dialAddr(t, st.BrokerAddr())

	start := time.Now()
	resp := d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("DefaultHeartBeatSyncerTopic", "1", "1", "6", ""), nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond, "the reply waited for the name server")
	f.mu.Lock()
	var carried bool
	for _, b := range f.answered {
		carried = carried || strings.Contains(b, `"DefaultHeartBeatSyncerTopic"`)
	}
	f.mu.Unlock()
	assert.True(t, carried, "a REGISTER_BROKER carrying the topic was answered before the reply")
}

func TestCreateTopicRegistrationTimeout(t *testing.T) {
	f := &routeNamesrv{routes: map[string]codec.TopicRouteData{}, regHang: true}
	cfg := d2Config(t.TempDir())
	cfg.NamesrvAddr = startRouteNamesrv(t, f)
	cfg.RegisterInterval = time.Hour
	st := d2Start(t, cfg)
	bc := dialAddr(t, st.BrokerAddr())
	start := time.Now()
	resp := d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("TopicH", "1", "1", "6", ""), nil)
	took := time.Since(start)
	require.Equal(t, codec.Success, resp.Code, "SUCCESS after the bounded wait: the topic is durable")
	assert.GreaterOrEqual(t, took, handler.CreateRegisterTimeout-100*time.Millisecond)
	assert.Less(t, took, handler.CreateRegisterTimeout+3*time.Second)
	_, ok := topicConfig(t, bc, "TopicH")
	assert.True(t, ok)
}
