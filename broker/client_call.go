package broker

// Calls to a consumer: GET_CONSUMER_RUNNING_INFO (307) and
// CONSUME_MESSAGE_DIRECTLY (309) of remoting, which mqadmin sends to a
// broker and the broker forwards to the named client's connection
// (broker/.../processor/AdminBrokerProcessor.java callConsumer over
// client/net/Broker2Client.java callClient). The core finds the client
// and, for 309, the message; the protocol adapter sends the request over
// the client's connection and relays the answer.
//
// Behaviour:
//   - The client is looked up among the live members of consumerGroup by
//     clientId (ConsumerManager.findChannel); none → SYSTEM_ERROR "The
//     Consumer <group> <clientId> not online"; a client whose heartbeat
//     version is below V3_1_8_SNAPSHOT → SYSTEM_ERROR "The Consumer
//     <clientId> Version <version> too low to finish, please upgrade it to
//     V3_1_8_SNAPSHOT".
//   - 309 first reads the message its msgId (an offsetMsgId) names, by
//     physical offset, on the reader pool, and adds to the forwarded
//     fields brokerName, topicSysFlag (when the header's topic exists)
//     and groupSysFlag (when the group exists), as consumeMessageDirectly
//     does; the record is the forwarded body.
//   - The adapter waits ClientCallTimeout (10 s) for the answer without
//     any goroutine waiting; the answer is relayed as the client gave it
//     (code, remark, fields, body). No answer in time → CONSUME_MSG_TIMEOUT
//     (207) "consumer <group> <clientId> Timeout: ..."; the connection
//     gone → SYSTEM_ERROR "invoke consumer <group> <clientId> Exception:
//     ..." (callConsumer's two catch clauses).
//
// Refusals of 309 before the client is looked up, where a Java broker
// fails with an exception (answered SYSTEM_ERROR too): a msgId that is
// not an offsetMsgId → SYSTEM_ERROR "invalid msgId <id>: <cause>"; no
// message at its offset → SYSTEM_ERROR "can not find message by the
// offset, <offset>"; reader queue full → SYSTEM_BUSY (2).

import (
	"errors"
	"strconv"
	"time"

	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// DefaultClientCallTimeout is how long the broker waits for a client's
// answer to a forwarded request: Broker2Client.callClient's invokeSync
// timeout (10000 ms).
const DefaultClientCallTimeout = 10 * time.Second

// minCallVersion is the ordinal of MQVersion V3_1_8_SNAPSHOT, the oldest
// client callConsumer forwards to.
const minCallVersion int32 = 62

// ClientCallTimeout is Settings.ClientCallTimeout, or
// DefaultClientCallTimeout when it is not set. Any goroutine.
func (b *Broker) ClientCallTimeout() time.Duration {
	if d := b.Settings.ClientCallTimeout; d > 0 {
		return d
	}
	return DefaultClientCallTimeout
}

// ConsumerChannel returns the live channel of clientID in consumer group
// group (its ConnID is the connection to forward over), or an *Error
// (SYSTEM_ERROR) when the client is not online or too old, with
// callConsumer's remarks. Any goroutine; memory only.
func (b *Broker) ConsumerChannel(group, clientID string) (clients.ClientChannel, *Error) {
	info, ok := b.Clients.Consumer(group)
	if ok {
		for _, ch := range info.Channels {
			if ch.ClientID != clientID {
				continue
			}
			if ch.Version < minCallVersion {
				return ch, Errorf(codec.SystemError, "The Consumer <%s> Version <%s> too low to finish, please upgrade it to V3_1_8_SNAPSHOT",
					clientID, codec.VersionName(ch.Version))
			}
			return ch, nil
		}
	}
	return clients.ClientChannel{}, Errorf(codec.SystemError, "The Consumer <%s> <%s> not online", group, clientID)
}

// DirectConsumeRequest is one CONSUME_MESSAGE_DIRECTLY
// (remoting/.../header/ConsumeMessageDirectlyResultRequestHeader.java:
// consumerGroup, clientId, msgId, topic).
type DirectConsumeRequest struct {
	ConsumerGroup string
	ClientID      string
	// MsgID is the message's offsetMsgId (mqadmin converts a msgId).
	MsgID string
	// Topic, when set, adds the topic's topicSysFlag to the forwarded
	// fields.
	Topic string
}

// DirectConsumeTarget is what the adapter forwards for a
// CONSUME_MESSAGE_DIRECTLY: the client's channel, the stored record as
// the body, and the fields consumeMessageDirectly adds to the request's
// own (brokerName, and topicSysFlag / groupSysFlag when known).
type DirectConsumeTarget struct {
	Channel clients.ClientChannel
	Record  []byte
	Fields  map[string]string
}

// PrepareDirectConsume reads the message r.MsgID names (on the reader
// pool) and finds r.ClientID in r.ConsumerGroup, then gives done what to
// forward, or an *Error (see the file comment for the codes). done runs
// on the caller's goroutine for a refusal before the read, else on a
// reader goroutine. Never blocks the caller.
func (b *Broker) PrepareDirectConsume(r DirectConsumeRequest, done func(DirectConsumeTarget, error)) {
	_, phys, err := codec.DecodeOffsetMsgID(r.MsgID)
	if err != nil {
		done(DirectConsumeTarget{}, Errorf(codec.SystemError, "invalid msgId %s: %v", r.MsgID, err))
		return
	}
	fields := map[string]string{"brokerName": b.Settings.BrokerName}
	if r.Topic != "" {
		if m, ok := b.Topics.Get(r.Topic); ok {
			fields["topicSysFlag"] = strconv.Itoa(int(m.TopicSysFlag))
		}
	}
	if g, ok := b.Groups.Get(r.ConsumerGroup); ok {
		fields["groupSysFlag"] = strconv.Itoa(int(g.GroupSysFlag))
	}
	job := func() {
		rec, err := b.Store.MessageByPhysicalOffset(phys)
		switch {
		case errors.Is(err, popstore.ErrNotFound):
			done(DirectConsumeTarget{}, Errorf(codec.SystemError, "can not find message by the offset, %d", phys))
			return
		case err != nil:
			done(DirectConsumeTarget{}, Errorf(codec.SystemError, "consume message directly: read message: %v", err))
			return
		}
		ch, cerr := b.ConsumerChannel(r.ConsumerGroup, r.ClientID)
		if cerr != nil {
			done(DirectConsumeTarget{}, cerr)
			return
		}
		done(DirectConsumeTarget{Channel: ch, Record: rec, Fields: fields}, nil)
	}
	if !b.SubmitRead(job) {
		done(DirectConsumeTarget{}, errBusy)
	}
}

// CallTimeoutError is the CONSUME_MSG_TIMEOUT (207) answer when the
// client did not answer a forwarded request within timeout; remote is the
// client's address (callConsumer's RemotingTimeoutException remark).
func CallTimeoutError(group, clientID, remote string, timeout time.Duration) *Error {
	return Errorf(codec.ConsumeMsgTimeout,
		"consumer <%s> <%s> Timeout: org.apache.rocketmq.remoting.exception.RemotingTimeoutException: wait response on the channel </%s> timeout, %d(ms)",
		group, clientID, remote, timeout.Milliseconds())
}

// CallFailedError is the SYSTEM_ERROR answer when a forwarded request
// could not be sent or its connection closed before the answer
// (callConsumer's RemotingSendRequestException remark).
func CallFailedError(group, clientID, remote string) *Error {
	return Errorf(codec.SystemError,
		"invoke consumer <%s> <%s> Exception: org.apache.rocketmq.remoting.exception.RemotingSendRequestException: send request to <%s> failed",
		group, clientID, remote)
}
