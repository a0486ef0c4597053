package handler

// SEND_BATCH_MESSAGE (320), broker/.../processor/SendMessageProcessor.java
// (sendBatchMessage).
//
// Header: the V2 send header (letters a..n, batch m=true); its properties
// are the batch's own and are not stored. Body: concatenated inner entries
// (codec.DecodeBatchBody): flag, body and properties of each message.
//
// Behaviour:
//   - Validated like SEND_MESSAGE; %RETRY% topics and topics longer than
//     127 characters are refused (Java batch rules).
//   - Each entry becomes its own stored record with the batch's topic,
//     queueId, sysFlag, bornTimestamp, born host and reconsumeTimes and its
//     own flag, body and properties (POP_CK stripped; no UNIQ_KEY or CLUSTER
//     added, as in Java). All records go to the writer as one op and get
//     consecutive queue offsets.
//   - Not delayed: a batch whose own properties carry a DELAY level ≥ 1 is
//     refused with MESSAGE_ILLEGAL (CommitLog.asyncPutMessages); DELAY and
//     TIMER_* properties of the entries are stored as given and not
//     acted on, as in Java (the schedule hook sees only single messages).
//   - SUCCESS when durable, msgId = comma-joined offsetMsgIds, queueOffset =
//     the first one.
//
// Response codes: as SEND_MESSAGE, plus MESSAGE_ILLEGAL (13) for an empty or
// undecodable body, a %RETRY% topic or a topic over 127 characters.

import (
	"fmt"
	"strconv"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleSendBatchMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeSendRequestHeader(req.Code, req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	switch {
	case len(h.Topic) > codec.MaxTopicLenV1:
		reply.Code(c, req, codec.MessageIllegal, fmt.Sprintf("message topic length too long %d", len(h.Topic)))
		return
	case codec.IsRetryTopic(h.Topic):
		reply.Code(c, req, codec.MessageIllegal, fmt.Sprintf("batch request does not support retry group %s", h.Topic))
		return
	case len(req.Body) > b.Settings.MaxMessageBytes:
		reply.Code(c, req, codec.MessageIllegal, fmt.Sprintf("the message body size %d over max value %d", len(req.Body), b.Settings.MaxMessageBytes))
		return
	}
	if v, _ := codec.PropertyValue(h.Properties, codec.PropertyDelayTimeLevel); atoiPositive(v) {
		// CommitLog.asyncPutMessages refuses a batch with a delay level.
		reply.Code(c, req, codec.MessageIllegal, fmt.Sprintf("the message is illegal, maybe msg body or properties length not matched. msg body length limit %dB, msg properties length limit 32KB.", b.Settings.MaxMessageBytes))
		return
	}
	msgs, err := codec.DecodeBatchBody(req.Body)
	if err == nil && len(msgs) == 0 {
		err = fmt.Errorf("empty batch")
	}
	if err != nil {
		reply.Code(c, req, codec.MessageIllegal, "invalid batch body: "+err.Error())
		return
	}
	t, code, remark := b.sendTargetOf(&h, req.Version)
	if code != codec.Success {
		reply.Code(c, req, code, remark)
		return
	}
	now := b.Now()
	born, host := addrPortOf(c.RemoteAddr()), b.StoreHost()
	recs := make([][]byte, len(msgs))
	for i := range msgs {
		m := codec.MessageExt{
			Message: codec.Message{
				Topic: t.topic, Flag: msgs[i].Flag, Body: msgs[i].Body,
				Properties: codec.DeleteProperty(msgs[i].Properties, codec.PropertyPopCK),
			},
			QueueID: t.queueID, SysFlag: h.SysFlag, BornTimestamp: h.BornTimestamp, BornHost: born,
			StoreTimestamp: now, StoreHost: host, ReconsumeTimes: h.ReconsumeTimes,
		}
		if recs[i], err = codec.AppendMessage(nil, &m); err != nil {
			reply.Code(c, req, codec.MessageIllegal, fmt.Sprintf("batch entry %d: %v", i, err))
			return
		}
	}
	b.appendRecords(c, req, t, recs, len(req.Body))
}

// atoiPositive reports whether v is a decimal integer ≥ 1.
func atoiPositive(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n > 0
}
