package broker

import (
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
)

// sendHalf stores a validated single SEND that transaction.IsHalf marks
// as a half message (SendMessageProcessor.sendMessage with
// sendTransactionPrepareMessage): the message is built as any SEND builds
// it (real topic and queue, UNIQ_KEY and CLUSTER set by Send, store time
// now, this broker's store host) without delay resolution, converted by
// NewHalf and written with one produce-lane op. The result carries the
// half's offsetMsgId, the real queue, the half's sequence number as
// QueueOffset and UNIQ_KEY as TransactionID. Caller's goroutine, as Send.
func (b *Broker) sendHalf(r *SendRequest, t sendTarget, uniq string, now int64, done func(SendResult, error)) {
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
	h, err := b.NewHalf(&m, r.ProducerGroup)
	if err != nil {
		done(SendResult{}, err)
		return
	}
	bodyBytes := len(r.Body)
	op := &batch.Op{Lane: batch.LaneProduce, Bytes: h.Bytes(), Apply: h.Apply, Done: func(err error) {
		if err != nil {
			done(SendResult{}, sendWriteError(err))
			return
		}
		h.Durable()
		hr := h.Result()
		b.Metrics.PutNums.Add(1)
		// Java counts the stored half under the half topic, message type
		// transaction (handlePutMessageResult after parseHalfMessageInner).
		in := b.Metrics.in(transaction.HalfTopic, "transaction", "true")
		in.msgs.Inc()
		in.bytes.Add(float64(bodyBytes))
		b.Transactions.Metrics().Prepared.WithLabelValues(t.topic).Inc()
		done(SendResult{MsgID: uniq, OffsetMsgID: hr.OffsetMsgID, Topic: t.topic, QueueID: hr.QueueID,
			QueueOffset: hr.QueueOffset, Count: 1, TransactionID: hr.TransactionID}, nil)
	}}
	if err := b.Writer.Submit(op); err != nil {
		done(SendResult{}, sendWriteError(err))
	}
}
