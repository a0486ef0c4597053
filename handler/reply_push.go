package handler

import (
	"fmt"
	"time"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// replyPushTimeout bounds the wait for a requester's answer to
// PUSH_REPLY_MESSAGE_TO_CLIENT: 10 s, Broker2Client.callClient's
// invokeSync timeout.
const replyPushTimeout = 10 * time.Second

// replyPusher is the remoting side of broker.ReplyPusher: it sends
// PUSH_REPLY_MESSAGE_TO_CLIENT (326), header
// codec.ReplyMessageRequestHeader and the reply body, as a request the
// client answers (remoting.Server.Invoke), to the requester's connection.
// SUCCESS (0) is a delivered reply; any other answer, no answer within
// replyPushTimeout or a closed connection is a failed push.
type replyPusher struct{ srv *remoting.Server }

// ServeReplies makes srv, the broker listener, the way the core pushes
// request-reply replies to requesters. Call once the server started.
func (b *Broker) ServeReplies(srv *remoting.Server) {
	b.SetReplyPusher(&replyPusher{srv: srv})
}

// PushReply sends p (see broker.ReplyPusher). Any goroutine; done runs on
// an event loop or a timer goroutine.
func (r *replyPusher) PushReply(p *broker.ReplyPush, done func(error)) {
	defTopic := p.DefaultTopic
	if defTopic == "" {
		defTopic = codec.AutoCreateTopicKey
	}
	req := codec.NewRequest(codec.RequestPushReplyMessageToClient, 0, nil, p.Body)
	codec.ReplyMessageRequestHeader{
		ProducerGroup: p.ProducerGroup, Topic: p.Topic, DefaultTopic: defTopic, DefaultTopicQueueNums: p.DefaultTopicQueueNums,
		QueueID: p.QueueID, SysFlag: p.SysFlag, BornTimestamp: p.BornTimestamp, Flag: p.Flag, Properties: p.Properties,
		ReconsumeTimes: p.ReconsumeTimes, UnitMode: p.UnitMode, BornHost: p.BornHost, StoreHost: p.StoreHost,
		StoreTimestamp: p.StoreTimestamp,
	}.Encode(req)
	r.srv.Invoke(p.ConnID, req, replyPushTimeout, func(resp *codec.Command, err error) {
		switch {
		case err != nil:
			done(err)
		case resp.Code != codec.Success:
			done(fmt.Errorf("requester answered code %d: %s", resp.Code, resp.Remark))
		default:
			done(nil)
		}
	})
}
