package handler

import (
	"errors"
	"maps"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// callConsumer forwards a request (code, fields, body) to the consumer
// channel ch over the listener that served req, and answers req on c with
// the consumer's answer as it came (code, remark, fields, body, language,
// version), or with CONSUME_MSG_TIMEOUT (207) when it does not answer
// within the core's ClientCallTimeout, or SYSTEM_ERROR when its connection
// is gone (AdminBrokerProcessor.callConsumer). Nothing waits: the answer
// is relayed from the consumer connection's event loop, the timeout from
// a timer goroutine, a connection already gone on the caller's goroutine.
// A client another protocol adapter owns (broker.Broker.CallClient: a v5
// consumer of the gRPC endpoint) is called through that adapter, which
// gives the answer in the same form. Any goroutine.
func (b *Broker) callConsumer(c remoting.Conn, req *codec.Command, code int32, group, clientID string,
	ch clients.ClientChannel, fields map[string]string, body []byte) {
	timeout := b.ClientCallTimeout()
	call := broker.ClientCall{Code: code, Group: group, ClientID: clientID, Channel: ch, Fields: fields, Body: body, Timeout: timeout}
	if b.CallClient(call, func(ans broker.ClientAnswer, err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		relayed := codec.NewResponse(req, ans.Code, ans.Remark)
		relayed.ExtFields, relayed.Body = ans.Fields, ans.Body
		if ans.Language != "" {
			relayed.Language, relayed.Version = ans.Language, ans.Version
		}
		reply.Respond(c, req, relayed)
	}) {
		return // a client of another protocol adapter (a v5 consumer of the gRPC endpoint)
	}
	failed := func() { reply.Err(c, req, broker.CallFailedError(group, clientID, ch.RemoteAddr)) }
	srv := remoting.ServerOf(c)
	if srv == nil {
		failed()
		return
	}
	out := codec.NewRequest(code, 0, fields, body)
	srv.Invoke(ch.ConnID, out, timeout, func(resp *codec.Command, err error) {
		switch {
		case err == nil:
			relayed := codec.NewResponse(req, resp.Code, resp.Remark)
			relayed.Language, relayed.Version = resp.Language, resp.Version
			relayed.ExtFields, relayed.Body = resp.ExtFields, resp.Body
			reply.Respond(c, req, relayed)
		case errors.Is(err, remoting.ErrInvokeTimeout):
			b.Log.Warn().Str("group", group).Str("clientId", clientID).Int32("code", code).Dur("timeout", timeout).
				Msg("consumer did not answer a forwarded request in time")
			reply.Err(c, req, broker.CallTimeoutError(group, clientID, ch.RemoteAddr, timeout))
		default:
			failed()
		}
	})
}

// forwardedFields are the fields of the admin's request a forwarded one
// carries: all of them, as callConsumer copies them, plus extra.
func forwardedFields(req *codec.Command, extra map[string]string) map[string]string {
	f := make(map[string]string, len(req.ExtFields)+len(extra))
	maps.Copy(f, req.ExtFields)
	maps.Copy(f, extra)
	return f
}
