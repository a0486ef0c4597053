package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// startGRPC normalises and validates o for a gRPC mode, names the run and
// creates the topic over remoting when o.GRPC.RemotingAddr is set.
func startGRPC(ctx context.Context, o *Options, mode string) error {
	o.Normalize()
	o.GRPC.normalize()
	if err := o.Validate(); err != nil {
		return err
	}
	if err := o.GRPC.validate(); err != nil {
		return err
	}
	o.names(mode, time.Now().UnixMilli())
	if o.GRPC.RemotingAddr == "" {
		return nil
	}
	co := o.clientOptions()
	co.TLS = nil // --tls is the gRPC endpoint's; the broker behind a proxy is reached in plaintext
	c, err := client.DialContext(ctx, o.GRPC.RemotingAddr, co)
	if err != nil {
		return fmt.Errorf("bench: --remoting-addr: %w", err)
	}
	defer func() { _ = c.Close() }()
	return createTopic(ctx, c, o)
}

// msgIDs makes v5 message ids: "01", then 32 upper-case hex digits (a
// per-run random prefix and a counter), 34 characters as the clients'
// ids (MessageIdCodec). Any goroutine.
type msgIDs struct {
	prefix string
	n      atomic.Uint64
}

func newMsgIDs() *msgIDs {
	return &msgIDs{prefix: fmt.Sprintf("01%08X%08X", uint32(os.Getpid()), uint32(time.Now().UnixNano()))}
}

// next returns a fresh id.
func (m *msgIDs) next() string {
	b := make([]byte, 0, 34)
	b = append(b, m.prefix...)
	h := strconv.AppendUint(nil, m.n.Add(1), 16)
	for range 16 - len(h) {
		b = append(b, '0')
	}
	for _, c := range h {
		if c >= 'a' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

// newV5Message is a NORMAL message of topic with body, as the Go producer
// fills it (grpc-v5 reference §9.1); stamp sets its id and born time.
func newV5Message(topic string, body []byte, host string) *v2.Message {
	return &v2.Message{
		Topic: &v2.Resource{Name: topic},
		SystemProperties: &v2.SystemProperties{BodyEncoding: v2.Encoding_IDENTITY, MessageType: v2.MessageType_NORMAL,
			BornHost: host, Tag: ptrOf("bench")},
		Body: body,
	}
}

// stamp gives m a fresh id and the current born time.
func stamp(m *v2.Message, ids *msgIDs) {
	m.SystemProperties.MessageId = ids.next()
	m.SystemProperties.BornTimestamp = timestamppb.Now()
}

func ptrOf[T any](v T) *T { return &v }

// benchBody is a body of n bytes of lower-case letters.
func benchBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// RunGRPCSend measures v5 SendMessage: o.Conns connections (one v5
// producer each, after the handshake of v5Conn.handshake) × o.Inflight
// calls in flight, one message of o.BodySize bytes per call, open loop or
// o.Rate calls/s, for o.Duration. Series "send" (per call; SUCCESS = status
// OK, SYSTEM_BUSY = TOO_MANY_REQUESTS, other codes by their v2 number,
// -1 transport). Errors: bad options, the topic creation or the handshake
// (the RPC and status named), a failure to write the report, ctx.
func RunGRPCSend(ctx context.Context, o Options) (*Report, error) {
	if err := startGRPC(ctx, &o, "grpc-send"); err != nil {
		return nil, err
	}
	conns, err := dialHandshaken(ctx, &o, o.Topic, func(a *v2.Endpoints) *v2.Settings { return producerSettings(a, o.Topic) })
	if err != nil {
		return nil, err
	}
	defer closeV5(conns)
	p := newPhase(&o, "grpc-send", len(conns), []string{"send"})
	body, host := benchBody(o.BodySize), hostName()
	ids, errs := newMsgIDs(), newErrorLog(o.Log)
	slots := len(conns) * o.Inflight
	reqs := make([]*v2.SendMessageRequest, slots)
	for i := range reqs {
		m := newV5Message(o.Topic, body, host)
		c := conns[i%len(conns)]
		m.SystemProperties.QueueId = c.queues[(i/len(conns))%len(c.queues)].GetId()
		reqs[i] = &v2.SendMessageRequest{Messages: []*v2.Message{m}}
	}
	load := newGRPCLoad(slots, o.Rate, func(slot int, t0 int64) loadStep {
		sh := slot % len(conns)
		req := reqs[slot]
		stamp(req.Messages[0], ids)
		cctx, cancel := conns[sh].call(unaryTimeout)
		resp, err := conns[sh].svc.SendMessage(cctx, req)
		cancel()
		us := (monoNanos() - t0) / 1e3
		st := resp.GetStatus()
		if err == nil && st.GetCode() == v2.Code_OK && len(resp.GetEntries()) > 0 {
			st = resp.GetEntries()[0].GetStatus()
		}
		code, cancelled := outcome(err, st)
		switch {
		case cancelled:
			return stepNext
		case code == codec.Success:
			p.rec.ok(sh, 0, us)
			return stepNext
		}
		p.rec.fail(sh, 0, code)
		errs.note("SendMessage", err, st)
		if err != nil {
			return stepPause
		}
		return stepNext
	})
	seconds, exhausted, runErr := p.measure(ctx, load)
	r := p.report(seconds, exhausted, "", "send")
	r.Config = o.grpcConfig()
	if err := finishReport(&o, r); err != nil {
		return r, err
	}
	return r, runErr
}

// hostName is this machine's name ("" when unknown), the born_host of
// the bench's messages.
func hostName() string {
	h, _ := os.Hostname()
	return h
}
