package broker

// ReplyPush is one PUSH_REPLY_MESSAGE_TO_CLIENT (326) for the ReplyPusher:
// the fields of ReplyMessageRequestHeader.java
// (remoting/.../protocol/header/ReplyMessageRequestHeader.java) and the
// reply's body, addressed to the requester's connection. The values are
// the SEND_REPLY_MESSAGE request's, as ReplyMessageProcessor.pushReplyMessage
// copies them, except BornHost (the replier's connection), StoreHost,
// StoreTimestamp and the PUSH_REPLY_TIME property added to Properties.
type ReplyPush struct {
	// ConnID is the requester's connection (the channel of its producer
	// heartbeat); ClientID its client id (the REPLY_TO_CLIENT property).
	ConnID   uint64
	ClientID string

	ProducerGroup         string // producerGroup
	Topic                 string // topic: the reply topic
	DefaultTopic          string // defaultTopic
	DefaultTopicQueueNums int32  // defaultTopicQueueNums
	QueueID               int32  // queueId, as the replier sent it
	SysFlag               int32  // sysFlag: the body's compression bits
	BornTimestamp         int64  // bornTimestamp, Unix ms (replier's clock)
	Flag                  int32  // flag
	Properties            string // properties, PUSH_REPLY_TIME added
	ReconsumeTimes        int32  // reconsumeTimes
	UnitMode              bool   // unitMode
	BornHost              string // bornHost: the replier's "ip:port"
	StoreHost             string // storeHost: this broker's "ip:port"
	StoreTimestamp        int64  // storeTimestamp: now, Unix ms
	// Body is the reply body as the replier sent it (maybe compressed;
	// the client inflates it by SysFlag). Not modified by the pusher.
	Body []byte
}

// ReplyPusher delivers reply messages to requesters: the protocol adapter
// that owns the requesters' connections (the remoting server's, see
// handler/reply_push.go) installs one with SetReplyPusher.
type ReplyPusher interface {
	// PushReply sends p to connection p.ConnID and calls done exactly
	// once, without blocking: nil when the client answered SUCCESS (0),
	// else an error (the client's other answer, no answer in time, the
	// connection gone). Called on the goroutine of the Reply operation;
	// must not block.
	PushReply(p *ReplyPush, done func(error))
}

// replyPusherRef boxes a ReplyPusher for atomic.Pointer.
type replyPusherRef struct{ p ReplyPusher }

// SetReplyPusher installs p as the way Reply reaches requesters; nil: none
// (every reply then fails as "channel not found"). Call before traffic;
// any goroutine.
func (b *Broker) SetReplyPusher(p ReplyPusher) {
	if p == nil {
		b.hooks.replies.Store(nil)
		return
	}
	b.hooks.replies.Store(&replyPusherRef{p: p})
}

// replyPusher returns the installed ReplyPusher, or nil.
func (b *Broker) replyPusher() ReplyPusher {
	if r := b.hooks.replies.Load(); r != nil {
		return r.p
	}
	return nil
}
