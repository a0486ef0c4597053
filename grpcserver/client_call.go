package grpcserver

import (
	"strconv"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
)

// Admin calls to v5 consumers. mqadmin's GET_CONSUMER_RUNNING_INFO (307)
// and CONSUME_MESSAGE_DIRECTLY (309) name a client id; when that client is
// a consumer of this endpoint the remoting adapter hands the call to the
// core (broker.Broker.CallClient), which offers it here. As rocketmq-proxy
// 5.5.0 does for its gRPC clients (GrpcClientChannel,
// GrpcChannelManager, ClientActivity.reportThreadStackTrace /
// reportVerifyMessageResult):
//   - 307 with jstackEnable=true is pushed on the client's Telemetry
//     stream as PrintThreadStackTraceCommand{nonce}; the client's
//     ThreadStackTrace{nonce} answers it: status OK → SUCCESS with a
//     ConsumerRunningInfo whose only content is the dump in jstack;
//     VERIFY_FIFO_MESSAGE_UNSUPPORTED → NO_PERMISSION (16) "forbidden to
//     verify message"; any other status → SYSTEM_ERROR (1) "verify
//     message failed" (the proxy's remarks). 307 without jstackEnable
//     sends nothing, as the proxy, and the admin gets the timeout.
//   - 309 is pushed as VerifyMessageCommand{nonce, message} (the stored
//     message as a v5 Message); the client's VerifyMessageResult{nonce}
//     answers it with SUCCESS and a ConsumeMessageDirectlyResult whose
//     consumeResult follows the item's status (OK → CR_SUCCESS,
//     FAILED_TO_CONSUME_MESSAGE → CR_LATER, MESSAGE_CORRUPTED →
//     CR_RETURN_NULL, other: none) and remark "from gRPC client".
//
// Nonces are fresh per call (a counter). An answer counts only when its
// nonce is pending, for the client id whose stream it came on and for a
// command of its kind; anything else is ignored, as the proxy ignores an
// unknown nonce. No answer within the call's timeout → CONSUME_MSG_TIMEOUT
// (207) with the remoting path's remark (the proxy's own relay gives up
// with SYSTEM_BUSY "call remote timeout" after its
// grpcProxyRelayRequestTimeoutInSeconds; popshim keeps one rule for both
// protocols). No open stream, a full outbox, a message that does not
// convert, or the stream ending before the answer → SYSTEM_ERROR as a
// gone connection (broker.CallFailedError). Nothing waits: the command is
// queued on the stream's outbox (written by the stream's handler), the
// answer is relayed from the stream's handler goroutine, the timeout from
// a timer goroutine.

// clientCaller is the endpoint's broker.ClientCaller.
type clientCaller struct {
	svc *service
}

// ServeClientCalls makes the core route 307 and 309 for v5 consumers of
// this endpoint here (broker.Broker.AddClientCaller); the returned
// function takes the endpoint out again (call it before the core closes).
// Any goroutine.
func (s *Server) ServeClientCalls() (remove func()) {
	return s.svc.core.AddClientCaller(&clientCaller{svc: s.svc})
}

// pendingCall is one call waiting for its client's answer.
type pendingCall struct {
	clientID string
	code     int32 // 307 or 309: the kind of answer that settles it
	stream   *telemetryStream
	call     broker.ClientCall
	done     func(broker.ClientAnswer, error)
	timer    *time.Timer
}

// clientCalls are the pending calls by nonce. Safe for concurrent use.
type clientCalls struct {
	mu   sync.Mutex
	next uint64
	m    map[string]*pendingCall
}

func newClientCalls() *clientCalls { return &clientCalls{m: map[string]*pendingCall{}} }

// add registers p under a fresh nonce, starts its timeout and returns the
// nonce.
func (cc *clientCalls) add(p *pendingCall, onTimeout func(nonce string)) string {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.next++
	nonce := strconv.FormatUint(cc.next, 10)
	cc.m[nonce] = p
	p.timer = time.AfterFunc(p.call.Timeout, func() { onTimeout(nonce) })
	return nonce
}

// take removes and returns the call of nonce when it is pending for
// clientID and settled by an answer to code ("" clientID, 0 code: any);
// nil otherwise. Its timer is stopped.
func (cc *clientCalls) take(nonce, clientID string, code int32) *pendingCall {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	p := cc.m[nonce]
	if p == nil || (clientID != "" && p.clientID != clientID) || (code != 0 && p.code != code) {
		return nil
	}
	delete(cc.m, nonce)
	p.timer.Stop()
	return p
}

// streamEnded removes and returns the calls pushed on ts.
func (cc *clientCalls) streamEnded(ts *telemetryStream) []*pendingCall {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	var out []*pendingCall
	for nonce, p := range cc.m {
		if p.stream == ts {
			delete(cc.m, nonce)
			p.timer.Stop()
			out = append(out, p)
		}
	}
	return out
}

// CallClient implements broker.ClientCaller for channels of this
// endpoint's connections (ids in the gRPC range, conns.go) and calls 307
// and 309; see the file comment for what is sent and answered.
func (k *clientCaller) CallClient(c broker.ClientCall, done func(broker.ClientAnswer, error)) bool {
	if c.Channel.ConnID&grpcConnIDBit == 0 {
		return false
	}
	if c.Code != codec.RequestGetConsumerRunningInfo && c.Code != codec.RequestConsumeMessageDirectly {
		return false
	}
	s := k.svc
	failed := func() {
		done(broker.ClientAnswer{}, broker.CallFailedError(c.Group, c.ClientID, c.Channel.RemoteAddr))
	}
	ts := s.clients.stream(c.ClientID)
	if ts == nil {
		failed()
		return true
	}
	var msg *v2.Message
	if c.Code == codec.RequestConsumeMessageDirectly {
		m, _, err := codec.DecodeMessage(c.Body)
		if err != nil {
			s.log.Error().Err(err).Str("group", c.Group).Str("clientId", c.ClientID).
				Msg("consume message directly: stored message does not decode; not sent")
			failed()
			return true
		}
		msg = RecordMessage(&m, DeliveryOptions{Now: nowOf(s.core), MaxInflatedBytes: s.send.MaxInflatedBytes})
	}
	p := &pendingCall{clientID: c.ClientID, code: c.Code, stream: ts, call: c, done: done}
	nonce := s.calls.add(p, s.callTimedOut)
	var cmd *v2.TelemetryCommand
	switch {
	case c.Code == codec.RequestConsumeMessageDirectly:
		cmd = &v2.TelemetryCommand{Command: &v2.TelemetryCommand_VerifyMessageCommand{
			VerifyMessageCommand: &v2.VerifyMessageCommand{Nonce: nonce, Message: msg}}}
	case c.Fields["jstackEnable"] == "true":
		cmd = &v2.TelemetryCommand{Command: &v2.TelemetryCommand_PrintThreadStackTraceCommand{
			PrintThreadStackTraceCommand: &v2.PrintThreadStackTraceCommand{Nonce: nonce}}}
	default:
		return true // as the proxy: nothing is asked, the call times out
	}
	if !ts.offer(cmd) && s.calls.take(nonce, "", 0) != nil {
		s.log.Warn().Str("group", c.Group).Str("clientId", c.ClientID).Msg("client call: telemetry outbox full; not sent")
		failed()
	}
	return true
}

// callTimedOut settles the call of nonce with CONSUME_MSG_TIMEOUT when it
// is still pending. Runs on a timer goroutine.
func (s *service) callTimedOut(nonce string) {
	p := s.calls.take(nonce, "", 0)
	if p == nil {
		return
	}
	c := p.call
	s.log.Warn().Str("group", c.Group).Str("clientId", c.ClientID).Int32("code", c.Code).Dur("timeout", c.Timeout).
		Msg("v5 consumer did not answer a forwarded request in time")
	p.done(broker.ClientAnswer{}, broker.CallTimeoutError(c.Group, c.ClientID, c.Channel.RemoteAddr, c.Timeout))
}

// callsStreamEnded settles the calls pushed on ts, which ended, as gone
// connections. Runs on the stream's handler goroutine.
func (s *service) callsStreamEnded(ts *telemetryStream) {
	for _, p := range s.calls.streamEnded(ts) {
		c := p.call
		p.done(broker.ClientAnswer{}, broker.CallFailedError(c.Group, c.ClientID, c.Channel.RemoteAddr))
	}
}

// callAnswered settles the call an answer item of client id names (a
// ThreadStackTrace or a VerifyMessageResult); an item no pending call
// matches is logged and dropped. Runs on the stream's handler goroutine.
func (s *service) callAnswered(id string, c *v2.TelemetryCommand) {
	var (
		nonce string
		code  int32
	)
	switch {
	case c.GetThreadStackTrace() != nil:
		nonce, code = c.GetThreadStackTrace().GetNonce(), codec.RequestGetConsumerRunningInfo
	case c.GetVerifyMessageResult() != nil:
		nonce, code = c.GetVerifyMessageResult().GetNonce(), codec.RequestConsumeMessageDirectly
	default:
		return
	}
	p := s.calls.take(nonce, id, code)
	if p == nil {
		s.log.Debug().Str("client", id).Str("nonce", nonce).Int32("code", code).Msg("telemetry answer with no pending call; ignored")
		return
	}
	if code == codec.RequestGetConsumerRunningInfo {
		p.done(runningInfoAnswer(c.GetStatus(), c.GetThreadStackTrace().GetThreadStackTrace()), nil)
		return
	}
	p.done(verifyAnswer(c.GetStatus()), nil)
}

// runningInfoAnswer is the remoting answer to 307 for a ThreadStackTrace
// with status st (ClientActivity.reportThreadStackTrace).
func runningInfoAnswer(st *v2.Status, jstack string) broker.ClientAnswer {
	switch st.GetCode() {
	case v2.Code_OK:
		return broker.ClientAnswer{Code: codec.Success, Body: codec.EncodeJstackRunningInfo(jstack)}
	case v2.Code_VERIFY_FIFO_MESSAGE_UNSUPPORTED:
		return broker.ClientAnswer{Code: codec.NoPermission, Remark: "forbidden to verify message"}
	default:
		return broker.ClientAnswer{Code: codec.SystemError, Remark: "verify message failed"}
	}
}

// verifyAnswer is the remoting answer to 309 for a VerifyMessageResult
// with status st (ClientActivity.buildConsumeMessageDirectlyResult).
func verifyAnswer(st *v2.Status) broker.ClientAnswer {
	r := codec.ConsumeMessageDirectlyResult{AutoCommit: true, Remark: "from gRPC client"}
	switch st.GetCode() {
	case v2.Code_OK:
		r.ConsumeResult = codec.CMResultSuccess
	case v2.Code_FAILED_TO_CONSUME_MESSAGE:
		r.ConsumeResult = codec.CMResultLater
	case v2.Code_MESSAGE_CORRUPTED:
		r.ConsumeResult = codec.CMResultReturnNull
	}
	return broker.ClientAnswer{Code: codec.Success, Body: codec.EncodeConsumeMessageDirectlyResult(r)}
}
