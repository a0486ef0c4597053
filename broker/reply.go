package broker

// Reply: SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2 (325) of
// remoting, the replier's half of request-reply;
// broker/.../processor/ReplyMessageProcessor.java.
//
// Request-reply as the Java client does it: the requester
// (DefaultMQProducer.request) sends an ordinary message carrying
// CORRELATION_ID, REPLY_TO_CLIENT (its client id) and TTL, after a
// HEART_BEAT that registered it as a producer; the broker stores it with
// CLUSTER set. A consumer builds the reply with
// MessageUtil.createReplyMessage (topic <CLUSTER>_REPLY_TOPIC, MSG_TYPE
// "reply", the three properties copied) and its producer sends it with
// code 324/325. This operation then:
//   - Validates it as a SEND (topic name and permission, auto-creation,
//     queueId; a negative queueId picks one): the same refusals and
//     remarks as Send. The reply topic of this broker's cluster exists
//     from the start (meta.ReplyTopic, one queue).
//   - Pushes PUSH_REPLY_MESSAGE_TO_CLIENT (326) to the requester: the
//     live producer channel whose client id is the REPLY_TO_CLIENT
//     property (clients.ClientTable.ProducerChannel; only producers count,
//     as ProducerManager.findChannel), with the request's header fields,
//     the replier as bornHost, PUSH_REPLY_TIME added to the properties
//     and the body unchanged (ReplyPusher). The client's answer decides
//     the response code.
//   - With --store-reply-message-enable (default true, as Java) also
//     stores the reply in its topic and queue, properties as sent (no
//     UNIQ_KEY or CLUSTER added, as Java), at the same time as the push.
//     done is called once both are over: the push answered (or failed)
//     and the write durable (or failed).
//
// Result: SUCCESS when the push succeeded: queueId the queue written,
// msgId the stored record's offsetMsgId and queueOffset its offset, or
// msgId "0" and queueOffset 0 when the reply was not stored (store
// disabled, or the write failed: Java answers a failed store of a
// delivered reply this way too).
//
// Errors (*Error): the Send refusals of the topic checks (TOPIC_NOT_EXIST
// (17), NO_PERMISSION (16), INVALID_PARAMETER (29), SYSTEM_ERROR (1) bad
// topic name, SYSTEM_BUSY (2) topic creation queue full); SYSTEM_ERROR
// (1) when the push failed, with Java's remarks: "reply message
// properties[REPLY_TO_CLIENT] is null", "push reply message fail, channel
// of <id> not found." (the requester is gone or never sent a producer
// heartbeat), "push reply message to <id>fail." (the requester answered
// an error, did not answer within 10 s, or its connection closed).
//
// Differences from Java: Java pushes first and stores after, on a blocked
// executor thread; popshim does both at once and never blocks. A delay or
// timer property on a reply is not acted on (stored as given).

import (
	"net/netip"
	"strconv"
	"sync/atomic"

	"github.com/popshim/popshim/codec"
)

// ReplyRequest is one SEND_REPLY_MESSAGE: the SEND fields (Batch must be
// false) and the three header fields the push echoes.
type ReplyRequest struct {
	SendRequest
	DefaultTopic          string // defaultTopic (c), echoed in the push
	DefaultTopicQueueNums int32  // defaultTopicQueueNums (d), echoed
	UnitMode              bool   // unitMode (k), echoed
}

// ReplyResult is the answer of a Reply whose push succeeded: the values
// of the SendMessageResponseHeader ReplyMessageProcessor answers with.
type ReplyResult struct {
	// OffsetMsgID is the stored reply's offsetMsgId, or "0" when the reply
	// was not stored.
	OffsetMsgID string
	// QueueID is the queue the reply was (or would have been) written to.
	QueueID int32
	// QueueOffset is the stored reply's queue offset; 0 when not stored.
	QueueOffset int64
	// Stored says the reply was stored (durable).
	Stored bool
}

// replyJoin completes a Reply once its push and its store are over.
type replyJoin struct {
	pending atomic.Int32
	queueID int32
	pushErr *Error     // written before the push's pending.Add(-1)
	stored  SendResult // written before the store's pending.Add(-1)
	ok      bool
	done    func(ReplyResult, error)
}

// finish counts one part over; the last one answers.
func (j *replyJoin) finish() {
	if j.pending.Add(-1) != 0 {
		return
	}
	if j.pushErr != nil {
		j.done(ReplyResult{}, j.pushErr)
		return
	}
	res := ReplyResult{OffsetMsgID: "0", QueueID: j.queueID}
	if j.ok {
		res.OffsetMsgID, res.QueueOffset, res.Stored = j.stored.OffsetMsgID, j.stored.QueueOffset, true
	}
	j.done(res, nil)
}

// Reply pushes the reply r to its requester and, with
// --store-reply-message-enable, stores it; done gets the result or an
// *Error as listed above. Any goroutine; never blocks. A refusal calls
// done before Reply returns.
func (b *Broker) Reply(r ReplyRequest, done func(ReplyResult, error)) {
	r.Batch = false
	// MSG_REGION and TRACE_ON on the pushed and the stored reply, as
	// AbstractSendMessageProcessor.buildMsgContext rewrites the header's
	// properties before ReplyMessageProcessor uses them.
	if props, err := setProperties(r.Properties, codec.PropertyMsgRegion, b.Settings.RegionID,
		codec.PropertyTraceSwitch, strconv.FormatBool(b.Settings.TraceOn)); err == nil {
		r.Properties = props
	}
	t, e := b.sendTargetOf(&r.SendRequest)
	if e != nil {
		done(ReplyResult{}, e)
		return
	}
	j := &replyJoin{queueID: t.queueID, done: done}
	store := b.Cfg.StoreReplyMessageEnable
	j.pending.Store(1)
	if store {
		j.pending.Store(2)
	}
	now := b.Now()
	if store {
		b.storeReply(&r, t, now, j)
	}
	b.pushReply(&r, now, j)
}

// storeReply appends the reply to its queue (one produce-lane op, as a
// SEND); a failure leaves j.ok false.
func (b *Broker) storeReply(r *ReplyRequest, t sendTarget, now int64, j *replyJoin) {
	stored := func(res SendResult, err error) {
		if err != nil {
			b.Log.Warn().Err(err).Str("topic", t.topic).Msg("reply: not stored; answered with msgId 0")
		} else {
			j.stored, j.ok = res, true
		}
		j.finish()
	}
	if len(r.Body) > b.Settings.MaxMessageBytes {
		stored(SendResult{}, b.bodyTooLarge(len(r.Body)))
		return
	}
	m := codec.MessageExt{
		Message:        codec.Message{Topic: t.topic, Flag: r.Flag, Body: r.Body, Properties: t.props},
		QueueID:        t.queueID,
		SysFlag:        r.SysFlag,
		BornTimestamp:  r.BornTimestamp,
		BornHost:       r.BornHost,
		StoreTimestamp: now,
		StoreHost:      b.StoreHost(),
		ReconsumeTimes: r.ReconsumeTimes,
	}
	rec, err := codec.AppendMessage(make([]byte, 0, codec.MessageRecordSize(&m)), &m)
	if err != nil {
		stored(SendResult{}, err)
		return
	}
	uniq, _ := codec.PropertyValue(t.props, codec.PropertyUniqClientMessageIDKeyIdx)
	b.submitSend(sendJob{b: b, t: t, recs: rec, n: 1, uniq: uniq, host: m.StoreHost, bodyBytes: len(r.Body), done: stored})
}

// pushReply finds the requester and hands the push to the ReplyPusher.
func (b *Broker) pushReply(r *ReplyRequest, now int64, j *replyJoin) {
	fail := func(remark string) {
		j.pushErr = &Error{Code: codec.SystemError, Remark: remark}
		j.finish()
	}
	id, ok := codec.PropertyValue(r.Properties, codec.PropertyMessageReplyToClient)
	if !ok {
		fail("reply message properties[" + codec.PropertyMessageReplyToClient + "] is null")
		return
	}
	ch, found := b.Clients.ProducerChannel(id)
	pusher := b.replyPusher()
	if !found || pusher == nil {
		fail("push reply message fail, channel of <" + id + "> not found.")
		return
	}
	props, err := codec.SetProperty(r.Properties, codec.PropertyPushReplyTime, strconv.FormatInt(now, 10))
	if err != nil {
		props = r.Properties
	}
	p := &ReplyPush{
		ConnID: ch.ConnID, ClientID: id,
		ProducerGroup: r.ProducerGroup, Topic: r.Topic, DefaultTopic: r.DefaultTopic,
		DefaultTopicQueueNums: r.DefaultTopicQueueNums, QueueID: r.QueueID, SysFlag: r.SysFlag,
		BornTimestamp: r.BornTimestamp, Flag: r.Flag, Properties: props, ReconsumeTimes: r.ReconsumeTimes,
		UnitMode: r.UnitMode, BornHost: javaHostPort(r.BornHost), StoreHost: javaHostPort(b.StoreHost()),
		StoreTimestamp: now, Body: r.Body,
	}
	pusher.PushReply(p, func(err error) {
		if err != nil {
			b.Log.Warn().Err(err).Str("clientId", id).Msg("reply: push to the requester failed")
			fail("push reply message to " + id + "fail.")
			return
		}
		j.finish()
	})
}

// javaHostPort formats an address as Java's getHostAddress() + ":" + port
// (no brackets around an IPv6 address; the client splits at the last ':').
func javaHostPort(a netip.AddrPort) string {
	return a.Addr().Unmap().String() + ":" + strconv.Itoa(int(a.Port()))
}
