package broker

// END_TRANSACTION (37), broker/.../processor/EndTransactionProcessor.java.
//
// Behaviour:
//   - commitOrRollback 0 (TRANSACTION_NOT_TYPE: the producer does not know
//     yet) is logged and nothing is done; the half waits for its next
//     check. Values other than 0, 8 and 12 are refused.
//   - The half is looked up by commitLogOffset (its physical offset) in
//     the op's Txn, so two decisions in one batch see each other. Refusals,
//     logged and counted in popshim_end_transaction_refused_total, never
//     applied, in Java's order and remarks:
//     no such half (unknown, or decided already: a second decision finds
//     nothing and changes nothing; a half the check-back loop moved to
//     TRANS_CHECK_MAX_TIME_TOPIC is still found until its retention ends,
//     so a late decision works as in Java) → SYSTEM_ERROR (1) "Find prepared
//     transaction message failed"; a decision not from a check on a half
//     carrying CHECK_IMMUNITY_TIME_IN_SECONDS, older than max(that,
//     --transaction-timeout) → ILLEGAL_OPERATION (604), no remark
//     (rejectCommitOrRollback; the producer must wait for the check);
//     producerGroup not the half's PGROUP → SYSTEM_ERROR "The producer
//     group wrong"; tranStateTableOffset not the half's sequence number →
//     SYSTEM_ERROR "The transaction state table offset wrong". Ages are
//     taken from the half's store time on the broker clock (Java: the
//     producer's born time against the broker's wall clock).
//   - Commit appends the message to its real topic and queue
//     (transaction.CommitRecord: as Java's commit log holds it) and
//     deletes the half and its due entry in the same WriteBatch; with a
//     DELAY or timer property it becomes a timer entry instead (as Java's
//     put hooks delay a committed message). The real topic must still
//     exist, else TOPIC_NOT_EXIST (17) and the half stays (its checks run
//     out into TRANS_CHECK_MAX_TIME_TOPIC). A timer property the delay
//     rules refuse → MESSAGE_ILLEGAL (13), half kept.
//   - Rollback deletes the half and its due entry.
//   - Lanes: a commit is an append of a message, so it goes on the produce
//     lane with SEND (the disk guard applies; a refused commit leaves the
//     half for the check). It is shed only after
//     --wait-time-mills-in-transaction-queue (3 s, as BrokerFastFailure
//     cleans Java's end-transaction queue), not after the SENDs' 200 ms: a
//     producer sends it oneway and never again. A rollback
//     only deletes and goes on the foreground lane, so it is not queued
//     behind a produce flood and is accepted when the disk is full.
//
// Response codes: SUCCESS (0) when durable; the refusals above;
// SYSTEM_BUSY (2) lane full or shed; SERVICE_NOT_AVAILABLE (14) disk full
// or store not writable; GO_AWAY (1500) shutting down; SYSTEM_ERROR (1)
// failed write.

import (
	"errors"
	"time"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/timer"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// EndTransactionRequest is one END_TRANSACTION: the fields of
// remoting/.../protocol/header/EndTransactionRequestHeader.java.
type EndTransactionRequest struct {
	// ProducerGroup must be the half's PGROUP.
	ProducerGroup string
	// TranStateTableOffset must be the half's sequence number (the SEND
	// reply's queueOffset).
	TranStateTableOffset int64
	// CommitLogOffset is the half's physical offset (decoded by the client
	// from the SEND reply's offsetMsgId).
	CommitLogOffset int64
	// CommitOrRollback is codec.SysFlagTransactionCommit (8),
	// SysFlagTransactionRollback (12) or SysFlagTransactionNotType (0).
	CommitOrRollback int32
	// FromTransactionCheck is true when the producer answers a
	// CHECK_TRANSACTION_STATE.
	FromTransactionCheck bool
	// MsgID (UNIQ_KEY), TransactionID and Topic are logged only.
	MsgID, TransactionID, Topic string
	// Remark is the request's remark (the producer's exception, if any);
	// Peer the client's address. Logged only.
	Remark, Peer string
}

// EndTransaction commits or rolls back a half message (see the behaviour
// list above) and calls done once: on the caller's goroutine for a
// refusal before anything is queued (including commitOrRollback 0, done
// with nil), else on the writer's completer after the decision is durable
// or refused. Any goroutine; never blocks.
func (b *Broker) EndTransaction(r EndTransactionRequest, done func(error)) {
	var lane batch.Lane
	switch r.CommitOrRollback {
	case codec.SysFlagTransactionNotType:
		b.warnEnd(&r, "end transaction: the producer does not know the state yet; waiting for the next check")
		done(nil)
		return
	case codec.SysFlagTransactionCommit:
		lane = batch.LaneProduce
		if r.FromTransactionCheck {
			b.warnEnd(&r, "end transaction: the producer commits the checked message")
		}
	case codec.SysFlagTransactionRollback:
		lane = batch.LaneForeground
		b.warnEnd(&r, "end transaction: the producer rolls the message back")
	default:
		done(Errorf(codec.SystemError, "commitOrRollback field wrong"))
		return
	}
	j := &endJob{b: b, r: r, done: done}
	// Past --queue-max-bytes too: a flood of large SENDs must not drop a
	// decision the producer sent oneway (the lane's capacity still holds).
	op := &batch.Op{Lane: lane, Bytes: 256, Job: j, PastByteBound: true}
	if lane == batch.LaneProduce {
		// Shed after waitTimeMillsInTransactionQueue, not the send queue's
		// wait: the producer sent it oneway and will not send it again.
		op.MaxWait = -1
		if ms := b.Cfg.WaitTimeMillsInTransactionQueue; ms > 0 {
			op.MaxWait = time.Duration(ms) * time.Millisecond
		}
	}
	if err := b.Writer.Submit(op); err != nil {
		b.notWritten(&r, err)
		done(produceError("end transaction", err))
	}
}

// notWritten counts and logs a decision the writer refused or dropped:
// the producer sent it oneway and never learns, so the log and
// popshim_end_transaction_refused_total{reason="not_written"} are the
// only trace; the half waits for its check.
func (b *Broker) notWritten(r *EndTransactionRequest, err error) {
	b.Transactions.Metrics().Refused.WithLabelValues(transaction.ReasonNotWritten).Inc()
	b.Log.Warn().Err(err).Str("peer", r.Peer).Str("producerGroup", r.ProducerGroup).Int64("commitLogOffset", r.CommitLogOffset).
		Int64("tranStateTableOffset", r.TranStateTableOffset).Str("msgId", r.MsgID).
		Bool("commit", r.CommitOrRollback == codec.SysFlagTransactionCommit).
		Msg("end transaction not written; the half waits for its check")
}

// warnEnd logs a request at warn level, as EndTransactionProcessor does
// for everything but a producer's own commit.
func (b *Broker) warnEnd(r *EndTransactionRequest, msg string) {
	b.Log.Warn().Str("peer", r.Peer).Str("producerGroup", r.ProducerGroup).Int64("commitLogOffset", r.CommitLogOffset).
		Int64("tranStateTableOffset", r.TranStateTableOffset).Str("msgId", r.MsgID).
		Bool("fromTransactionCheck", r.FromTransactionCheck).Str("remark", r.Remark).Msg(msg)
}

// endJob is one END_TRANSACTION's writer op (batch.Job).
type endJob struct {
	b    *Broker
	r    EndTransactionRequest
	done func(error)
	// Set by Apply (writer goroutine), read by Done.
	reason  string // refusal reason (transaction.Reason*), "" when applied
	topic   string // real topic
	stored  int64  // the half's store time
	born    int64  // the half's born time (the producer's clock), ms
	body    int    // the message body's size (throughput metric)
	timerAt int64  // >0: committed as a timer entry due then
}

// refuse records a refusal for Done and returns it.
func (j *endJob) refuse(reason string, e *Error) error {
	j.reason = reason
	return e
}

// Apply finds the half, checks the request against it and writes the
// decision (writer goroutine).
func (j *endJob) Apply(tx *popstore.Txn) error {
	b, r := j.b, &j.r
	j.reason, j.timerAt = "", 0
	h, ok, err := tx.GetHalf(r.CommitLogOffset)
	if err != nil {
		return err
	}
	if !ok {
		return j.refuse(transaction.ReasonNotFound, Errorf(codec.SystemError, "Find prepared transaction message failed"))
	}
	m, _, err := codec.DecodeMessage(h.Record)
	if err != nil {
		return j.refuse(transaction.ReasonIllegal, Errorf(codec.SystemError, "stored half message unreadable: %v", err))
	}
	j.stored, j.born, j.body = m.StoreTimestamp, m.BornTimestamp, len(m.Body)
	j.topic, _ = m.Property(codec.PropertyRealTopic)
	now := b.Now()
	if imm, ok := transaction.ImmunityMillis(m.Properties, b.Transactions.Settings().TimeoutMillis); ok && !r.FromTransactionCheck && now-j.stored > imm {
		return j.refuse(transaction.ReasonImmunity, &Error{Code: codec.IllegalOperation})
	}
	if h.ProducerGroup != r.ProducerGroup {
		return j.refuse(transaction.ReasonGroup, Errorf(codec.SystemError, "The producer group wrong"))
	}
	if h.Seq != r.TranStateTableOffset {
		return j.refuse(transaction.ReasonOffset, Errorf(codec.SystemError, "The transaction state table offset wrong"))
	}
	if r.CommitOrRollback == codec.SysFlagTransactionRollback {
		_, err := tx.DeleteHalf(h.PhysicalOffset)
		return err
	}
	return j.commit(tx, &h, now)
}

// commit writes the committed message (or its timer entry) and removes
// the half.
func (j *endJob) commit(tx *popstore.Txn, h *popstore.Half, now int64) error {
	b := j.b
	f, err := transaction.CommitRecord(h, now)
	if err != nil {
		return j.refuse(transaction.ReasonIllegal, Errorf(codec.MessageIllegal, "The message is illegal: %v", err))
	}
	if _, ok := b.Topics.Get(f.Topic); !ok {
		return j.refuse(transaction.ReasonTopic, Errorf(codec.TopicNotExist, "topic[%s] not exist, apply first please!", f.Topic))
	}
	sch, err := b.Delay.Resolve(f.Props, f.Topic, f.QueueID, now)
	if errors.Is(err, timer.ErrIllegal) {
		return j.refuse(transaction.ReasonIllegal, Errorf(codec.MessageIllegal, "%s", b.Delay.IllegalRemark()))
	}
	if err == nil && sch.DueMillis > 0 {
		if f, err = f.WithProps(sch.Props); err != nil {
			return j.refuse(transaction.ReasonIllegal, Errorf(codec.MessageIllegal, "The message is illegal: %v", err))
		}
		if _, err := tx.PutTimer(sch.DueMillis, f.QueueID, f.Record); err != nil {
			return err
		}
		j.timerAt = sch.DueMillis
		_, err = tx.DeleteHalf(h.PhysicalOffset)
		return err
	}
	_, _, _, err = tx.CommitHalf(h.PhysicalOffset, f.Topic, f.QueueID, f.Record)
	return err
}

// Done reports the outcome (writer's completer).
func (j *endJob) Done(err error) {
	b, r := j.b, &j.r
	m := b.Transactions.Metrics()
	switch {
	case err == nil && r.CommitOrRollback == codec.SysFlagTransactionCommit:
		m.Commits.WithLabelValues(j.topic).Inc()
		// Whole seconds from the producer's born time, as EndTransactionProcessor records it.
		m.FinishLatency.WithLabelValues(j.topic).Observe(float64(max(b.Now()-j.born, 0) / 1000))
		b.Metrics.PutNums.Add(1)
		// Counted in the real topic's messages_in (type transaction), so
		// that TOPIC_PUT_NUMS shows committed messages as Java's
		// BrokerStatsManager does (EndTransactionProcessor.sendFinalMessage);
		// Java's OpenTelemetry messages_in counts only the half.
		sys := IsSystemTopic(j.topic)
		b.Metrics.MessagesIn.WithLabelValues(j.topic, "transaction", sys).Inc()
		b.Metrics.ThroughputIn.WithLabelValues(j.topic, "transaction", sys).Add(float64(j.body))
		if j.timerAt > 0 {
			b.Timers.NoteDurable(j.timerAt)
			b.Metrics.TimerEnqueued.Inc()
		}
	case err == nil:
		m.Rollbacks.WithLabelValues(j.topic).Inc()
	case j.reason != "":
		m.Refused.WithLabelValues(j.reason).Inc()
		b.Log.Warn().Err(err).Str("reason", j.reason).Str("peer", r.Peer).Str("producerGroup", r.ProducerGroup).
			Int64("commitLogOffset", r.CommitLogOffset).Int64("tranStateTableOffset", r.TranStateTableOffset).
			Str("msgId", r.MsgID).Bool("fromTransactionCheck", r.FromTransactionCheck).Msg("end transaction refused")
		j.done(err)
		return
	default:
		b.notWritten(r, err)
		j.done(produceError("end transaction", err))
		return
	}
	j.done(nil)
}
