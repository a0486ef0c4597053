package broker

// Transactional messages, the half-message side (RocketMQ's
// TransactionalMessageBridge.putHalfMessage behind SendMessageProcessor).
//
// Behaviour:
//   - A SEND whose properties say TRAN_MSG=true (transaction.IsHalf) is a
//     half message. The SEND path builds the message as for any SEND
//     (real topic and queue, UNIQ_KEY, CLUSTER, store time now, no delay
//     resolution: a DELAY or timer property applies when the half is
//     committed, as in Java) and hands it to NewHalf (then its op's Apply
//     calls PreparedHalf.Apply and its Done PreparedHalf.Durable) or to
//     PrepareHalf (one produce-lane op of its own).
//   - The half is stored as Java stores it (transaction.HalfRecord:
//     REAL_TOPIC, REAL_QID, __transactionId__ added, topic
//     RMQ_SYS_TRANS_HALF_TOPIC, queue 0, transaction bits cleared) in the
//     store's half key space (popstore/halves.go), not in any queue: POP,
//     PULL, offsets and message queries of the real topic do not see it.
//   - It gets a physical offset from the counter messages use and the next
//     per-broker half sequence number. The SEND reply carries msgId =
//     offsetMsgId(store host, physical offset) — the client decodes
//     END_TRANSACTION's commitLogOffset from it —, queueId = the real
//     queue, queueOffset = the sequence number (END_TRANSACTION's
//     tranStateTableOffset) and transactionId = UNIQ_KEY
//     (SendMessageProcessor.handlePutMessageResult).
//   - Its first check is due --transaction-timeout after its store time,
//     or CHECK_IMMUNITY_TIME_IN_SECONDS after it when the property is set
//     (transaction.FirstCheckDelay); see broker/transaction for the loop.
//
// Response codes (PrepareHalf; a SEND path using NewHalf maps writer
// errors itself): MESSAGE_ILLEGAL (13) bad properties; SYSTEM_BUSY (2)
// writer lane full or the op shed after --wait-time-mills-in-send-queue;
// SERVICE_NOT_AVAILABLE (14) disk above the warning ratio or store not
// writable; GO_AWAY (1500) shutting down; SYSTEM_ERROR (1) failed write.

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// newTransactions builds the check-back loop (b.Transactions) and
// registers the transaction metrics with reg (nil: not registered).
// Called by New once the topic table exists.
func (b *Broker) newTransactions(reg prometheus.Registerer) error {
	m := transaction.NewMetrics()
	if reg != nil {
		if err := m.Register(reg, b.Store.PendingHalves); err != nil {
			return fmt.Errorf("broker: register transaction metrics: %w", err)
		}
	}
	b.Transactions = transaction.New(transaction.Deps{
		Log: b.Log, Store: b.Store, Writer: b.Writer, Now: b.Now, BrokerName: b.Settings.BrokerName,
		EnsureCheckMaxTopic: func() error {
			_, err := b.Topics.EnsureSystemTopic(transaction.CheckMaxTopic, 1)
			return err
		},
		Settings: transaction.Settings{
			Interval:      b.Cfg.TransactionCheckInterval,
			TimeoutMillis: b.Cfg.TransactionTimeout.Milliseconds(),
			CheckMax:      int32(b.Cfg.TransactionCheckMax),
		},
		Metrics: m,
	})
	return nil
}

// HalfResult is what a SEND reply of a half message carries.
type HalfResult struct {
	// OffsetMsgID is the reply's msgId: store host + PhysicalOffset.
	OffsetMsgID string
	// QueueID is the real queue the message will be committed to.
	QueueID int32
	// QueueOffset is the half's sequence number, END_TRANSACTION's
	// tranStateTableOffset.
	QueueOffset int64
	// PhysicalOffset is END_TRANSACTION's commitLogOffset.
	PhysicalOffset int64
	// TransactionID is the message's UNIQ_KEY ("" when it has none).
	TransactionID string
}

// PreparedHalf is one half message ready for a writer op: NewHalf
// converted it; Apply stores it in the op's Txn; Durable reports it once
// the op's write succeeded; Result is the SEND reply's content after
// Apply. One op, one PreparedHalf.
type PreparedHalf struct {
	b      *Broker
	record []byte
	group  string
	due    int64
	host   netip.AddrPort // the record's store host (offsetMsgId)
	res    HalfResult
}

// NewHalf converts the message a SEND built into a half message (see the
// behaviour list above). m is the message as it would be stored (real
// topic and queue, StoreTimestamp the broker clock's now, StoreHost set);
// producerGroup is the SEND header's, used when PGROUP is missing. m is
// not modified. Any goroutine, no I/O. Errors: *Error MESSAGE_ILLEGAL
// (13) naming the cause.
func (b *Broker) NewHalf(m *codec.MessageExt, producerGroup string) (*PreparedHalf, error) {
	rec, group, err := transaction.HalfRecord(m, producerGroup)
	if err != nil {
		return nil, Errorf(codec.MessageIllegal, "%v", err)
	}
	uniq, _ := m.Property(codec.PropertyUniqClientMessageIDKeyIdx)
	delay := transaction.FirstCheckDelay(m.Properties, b.Transactions.Settings().TimeoutMillis)
	return &PreparedHalf{b: b, record: rec, group: group, due: m.StoreTimestamp + delay, host: m.StoreHost,
		res: HalfResult{QueueID: m.QueueID, TransactionID: uniq}}, nil
}

// Bytes is the size of the stored record (batch.Op.Bytes).
func (h *PreparedHalf) Bytes() int { return len(h.record) }

// Apply stores the half in tx (writer goroutine). Errors: the store's
// (popstore.ErrBadName for a producer group holding '@', ErrTxnDone).
func (h *PreparedHalf) Apply(tx *popstore.Txn) error {
	phys, seq, err := tx.PutHalf(h.group, h.due, h.record)
	if err != nil {
		return err
	}
	h.res.PhysicalOffset, h.res.QueueOffset = phys, seq
	h.res.OffsetMsgID = codec.OffsetMsgID(h.host, phys)
	return nil
}

// Durable reports the half made durable: it wakes the check-back loop if
// the half is due before its next pass. Call from the op's Done when its
// error is nil; any goroutine, never blocks.
func (h *PreparedHalf) Durable() { h.b.Transactions.NoteHalf(h.due) }

// Result is the SEND reply's content; valid after a successful Apply.
func (h *PreparedHalf) Result() HalfResult { return h.res }

// HalfRequest is a half message to store on its own (PrepareHalf).
type HalfRequest struct {
	// Message is the message as a SEND would store it (see NewHalf).
	Message *codec.MessageExt
	// ProducerGroup is the SEND header's producerGroup (fallback PGROUP).
	ProducerGroup string
}

// PrepareHalf stores one half message with one produce-lane op and calls
// done with the SEND reply's content once it is durable, or with an
// *Error (codes in the behaviour list above). done runs once: on the
// caller's goroutine for a refusal before anything is queued, else on the
// writer's completer.
func (b *Broker) PrepareHalf(r HalfRequest, done func(HalfResult, error)) {
	h, err := b.NewHalf(r.Message, r.ProducerGroup)
	if err != nil {
		done(HalfResult{}, err)
		return
	}
	op := &batch.Op{Lane: batch.LaneProduce, Bytes: h.Bytes(), Apply: h.Apply,
		Done: func(err error) {
			if err != nil {
				done(HalfResult{}, produceError("store half message", err))
				return
			}
			h.Durable()
			done(h.Result(), nil)
		}}
	if err := b.Writer.Submit(op); err != nil {
		done(HalfResult{}, produceError("store half message", err))
	}
}

// produceError maps a writer error of a produce-lane op (a Submit refusal
// or its Done error) as SEND does: busy or shed → SYSTEM_BUSY (2); disk
// above the warning ratio, writer stopped after a failed write, store
// unavailable → SERVICE_NOT_AVAILABLE (14); closed → GO_AWAY (1500);
// anything else as writeFailed.
func produceError(what string, err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, batch.ErrBusy), errors.Is(err, batch.ErrClosed):
		return SubmitError(what, err)
	case errors.Is(err, batch.ErrDiskFull), errors.Is(err, batch.ErrFailed), errors.Is(err, popstore.ErrUnavailable):
		return Errorf(codec.ServiceNotAvailable, "service not available now: %s: %v", what, err)
	}
	return writeFailed(what, err)
}
