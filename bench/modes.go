package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// start opens the connections for a network mode after normalising o.
func start(ctx context.Context, o *Options, mode string) ([]*client.Conn, error) {
	o.Normalize()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.names(mode, time.Now().UnixMilli())
	return dialAll(ctx, o)
}

// recordReply records a reply of series s: SUCCESS as latency, anything
// else as a failure.
func recordReply(p *phase, sh, s int, us int64, resp *codec.Command, err error) {
	if code := replyCode(resp, err); code == codec.Success {
		p.rec.ok(sh, s, us)
	} else {
		p.rec.fail(sh, s, code)
	}
}

// Pop mode long-polls (pollTime 1 s) so an empty queue parks on the broker
// instead of spinning; a queue that stays empty popMaxMisses polls in a row
// is given up.
const (
	popPollTime  = time.Second
	popMaxMisses = 5
)

// RunPop measures pop+ack throughput (orderly POPs with o.Orderly): o.Messages messages are produced
// first; then each queue has one POP_MESSAGE in flight (maxMsgNums 32,
// pipelined over the connections) and every popped message is ACKed at
// once on the same connection. Series "pop" (empty = not found) and "ack";
// the run ends at o.Duration or when every queue has returned the messages
// produced into it. Errors as RunAck.
func RunPop(ctx context.Context, o Options) (*Report, error) {
	clients, err := start(ctx, &o, "pop")
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	t0 := time.Now()
	if o.CreateTopic {
		if err := createTopic(ctx, clients[0], &o); err != nil {
			return nil, err
		}
	}
	prod, err := produce(ctx, clients, &o, o.Messages)
	if err != nil {
		return nil, err
	}
	prep := &PrepareStats{Produced: int(prod.total.Load()), Seconds: time.Since(t0).Seconds()}
	if prep.SettleSeconds, prep.Settled, err = settle(ctx, &o); err != nil {
		return nil, err
	}
	const sPop, sAck = 0, 1
	p := newPhase(&o, "pop", len(clients), []string{"pop", "ack"})
	popped := make([]atomic.Int64, o.Queues)
	misses := make([]atomic.Int32, o.Queues)
	var acksInFlight sync.WaitGroup
	pops := newStream(clients, o.Queues, 0)
	pops.build = func(slot int) (*codec.Command, int, bool) {
		if popped[slot].Load() >= prod.perQueue[slot].Load() || misses[slot].Load() >= popMaxMisses {
			return nil, 0, false
		}
		req := popRequest(o.Group, o.Topic, int32(slot), 32, o.InvisibleTime, popPollTime)
		if o.Orderly {
			req.ExtFields["order"] = "true"
		}
		return req, slot, true
	}
	pops.finish = func(sh, q int, us int64, resp *codec.Command, err error) {
		switch code := replyCode(resp, err); code {
		case codec.Success:
			misses[q].Store(0)
			rs, err := client.ReceiptsFromPop(nil, resp, o.Topic, o.Group, o.BrokerName)
			if err != nil {
				p.rec.fail(sh, sPop, codec.SystemError)
				return
			}
			popped[q].Add(int64(len(rs)))
			p.rec.ok(sh, sPop, us)
			for i := range rs {
				t := time.Now()
				acksInFlight.Add(1)
				err := clients[sh].InvokeAsync(ackRequest(o.Group, &rs[i]), func(resp *codec.Command, err error) {
					recordReply(p, sh, sAck, time.Since(t).Microseconds(), resp, err)
					acksInFlight.Done()
				})
				if err != nil {
					p.rec.fail(sh, sAck, codeTransport)
					acksInFlight.Done()
				}
			}
		case codec.PullNotFound, codec.PollingTimeout:
			misses[q].Add(1)
			p.rec.empty(sh, sPop)
		default:
			p.rec.fail(sh, sPop, code)
		}
	}
	waitAcks := func(stop <-chan struct{}) {
		<-stop
		acksInFlight.Wait()
	}
	seconds, exhausted, runErr := p.measure(ctx, pops, waitAcks)
	r := p.report(seconds, exhausted, "ack", "pop", "ack")
	r.Prepare = prep
	if err := finishReport(&o, r); err != nil {
		return r, err
	}
	return r, runErr
}

// RunProduce measures SEND_MESSAGE_V2 throughput: o.Conns×o.Inflight slots
// (open loop or o.Rate), queues round-robin, o.BodySize bytes, for
// o.Duration. Series "send". Errors as RunAck.
func RunProduce(ctx context.Context, o Options) (*Report, error) {
	clients, err := start(ctx, &o, "produce")
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	if o.CreateTopic {
		if err := createTopic(ctx, clients[0], &o); err != nil {
			return nil, err
		}
	}
	body := bodies(&o)
	p := newPhase(&o, "produce", len(clients), []string{"send"})
	var seq atomic.Int64
	s := newStream(clients, len(clients)*o.Inflight, o.Rate)
	s.build = func(int) (*codec.Command, int, bool) {
		q := seq.Add(1)
		return sendRequest("bench_producer", o.Topic, int32(q%int64(o.Queues)), o.Queues, q, body(q), keysProperty(q, o.Keys)), 0, true
	}
	s.finish = func(sh, _ int, us int64, resp *codec.Command, err error) { recordReply(p, sh, 0, us, resp, err) }
	seconds, exhausted, runErr := p.measure(ctx, s)
	r := p.report(seconds, exhausted, "", "send")
	if err := finishReport(&o, r); err != nil {
		return r, err
	}
	return r, runErr
}

// RunHeartbeat measures the network limit: HEART_BEAT (34) round trips of
// one producer client per connection, o.Conns×o.Inflight slots, for
// o.Duration. The broker
// answers HEART_BEAT without touching storage, so this is the ceiling of
// the remoting path (decode, dispatch, reply) on this machine. Series
// "heartbeat". Errors as RunAck.
func RunHeartbeat(ctx context.Context, o Options) (*Report, error) {
	clients, err := start(ctx, &o, "heartbeat")
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	host, _ := os.Hostname()
	p := newPhase(&o, "heartbeat", len(clients), []string{"heartbeat"})
	s := newStream(clients, len(clients)*o.Inflight, o.Rate)
	bodies := make([][]byte, len(clients)) // one client ID per connection, encoded once
	for i := range bodies {
		bodies[i] = heartbeatRequest(fmt.Sprintf("127.0.0.1@bench-%s-%d", host, i), "bench_producer").Body
	}
	s.build = func(slot int) (*codec.Command, int, bool) {
		c := newRequest(codec.RequestHeartBeat)
		c.Body = bodies[slot%len(clients)]
		return c, 0, true
	}
	s.finish = func(sh, _ int, us int64, resp *codec.Command, err error) { recordReply(p, sh, 0, us, resp, err) }
	seconds, exhausted, runErr := p.measure(ctx, s)
	r := p.report(seconds, exhausted, "")
	if err := finishReport(&o, r); err != nil {
		return r, err
	}
	return r, runErr
}
