package broker

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/popshim/popshim/codec"
)

// sendBatch validates a batch send and stores its entries with one op.
// Caller's goroutine, as Send.
func (b *Broker) sendBatch(r *SendRequest, done func(SendResult, error)) {
	switch {
	case len(r.Topic) > codec.MaxTopicLenV1:
		done(SendResult{}, Errorf(codec.MessageIllegal, "message topic length too long %d", len(r.Topic)))
		return
	case codec.IsRetryTopic(r.Topic):
		done(SendResult{}, Errorf(codec.MessageIllegal, "batch request does not support retry group %s", r.Topic))
		return
	case len(r.Body) > b.Settings.MaxMessageBytes:
		done(SendResult{}, b.bodyTooLarge(len(r.Body)))
		return
	}
	if e := checkInnerBatch(r.SysFlag, r.Properties); e != nil {
		done(SendResult{}, e)
		return
	}
	if v, _ := codec.PropertyValue(r.Properties, codec.PropertyDelayTimeLevel); atoiPositive(v) || codec.TransactionType(r.SysFlag) != codec.SysFlagTransactionNotType {
		// CommitLog.asyncPutMessages refuses a batch with a delay level or a
		// transaction type.
		done(SendResult{}, Errorf(codec.MessageIllegal, "the message is illegal, maybe msg body or properties length not matched. msg body length limit %dB, msg properties length limit 32KB.", b.Settings.MaxMessageBytes))
		return
	}
	// The entries alias r.Body; they are copied into the records below,
	// before Send returns.
	msgs, err := codec.UnsafeDecodeBatchBody(r.Body)
	if err == nil && len(msgs) == 0 {
		err = errors.New("empty batch")
	}
	if err != nil {
		done(SendResult{}, &Error{Code: codec.MessageIllegal, Remark: "invalid batch body: " + err.Error()})
		return
	}
	t, e := b.sendTargetOf(r)
	if e != nil {
		done(SendResult{}, e)
		return
	}
	m := codec.MessageExt{QueueID: t.queueID, SysFlag: r.SysFlag, BornTimestamp: r.BornTimestamp, BornHost: r.BornHost,
		StoreTimestamp: b.Now(), StoreHost: b.StoreHost(), ReconsumeTimes: r.ReconsumeTimes}
	size := 0
	for i := range msgs {
		msgs[i].Topic = t.topic
		// Each entry keeps only its own properties: a 5.5 broker no longer
		// appends the batch's (CLUSTER, MSG_REGION, TRACE_ON) to them
		// (MessageExtEncoder.encodeBatch since apache/rocketmq #9417).
		msgs[i].Properties = codec.DeleteProperty(msgs[i].Properties, codec.PropertyPopCK)
		if n := len(msgs[i].Properties); n > codec.MaxSendPropertiesLen {
			e := propertiesTooLong(n)
			e.Remark = fmt.Sprintf("batch entry %d: %s", i, e.Remark)
			done(SendResult{}, e)
			return
		}
		m.Message = msgs[i]
		size += codec.MessageRecordSize(&m)
	}
	buf := getRecordBuf(size)
	recs := buf.b
	for i := range msgs {
		m.Message = msgs[i]
		if recs, err = codec.AppendMessage(recs, &m); err != nil {
			putRecordBuf(buf)
			done(SendResult{}, Errorf(codec.MessageIllegal, "batch entry %d: %v", i, err))
			return
		}
	}
	batchUniq, _ := codec.PropertyValue(r.Properties, codec.PropertyUniqClientMessageIDKeyIdx)
	b.submitSend(sendJob{b: b, t: t, recs: recs, buf: buf, n: len(msgs), batchUniq: batchUniq, host: m.StoreHost,
		bodyBytes: len(r.Body), done: done})
}

// atoiPositive reports whether v is a decimal integer ≥ 1.
func atoiPositive(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n > 0
}

// checkInnerBatch refuses what HookUtils.checkInnerBatch refuses on a
// topic without a batch consume queue (popshim serves none): sysFlag 0x80
// (INNER_BATCH_FLAG), or the INNER_NUM property without it. Both are
// MESSAGE_ILLEGAL (13) naming the field. Before 2026-12-07 such a SEND was
// stored as given; a Java client cannot decode a record flagged 0xffff and
// its consumer skipped it without an error.
func checkInnerBatch(sysFlag int32, props string) *Error {
	if sysFlag&codec.SysFlagInnerBatch != 0 {
		return Errorf(codec.MessageIllegal, "sysFlag %#x has INNER_BATCH_FLAG (0x80), which only a batch consume queue topic takes; this broker serves none", sysFlag)
	}
	if _, ok := codec.PropertyValue(props, codec.PropertyInnerNum); ok {
		return Errorf(codec.MessageIllegal, "property %s is set but sysFlag %#x lacks INNER_BATCH_FLAG (0x80)", codec.PropertyInnerNum, sysFlag)
	}
	return nil
}
