package broker

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"sync"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// sendJob is the writer op of one Send: the validated target, the stored
// records and the caller's completion, in one allocation (it embeds the
// batch.Op and is its Job).
type sendJob struct {
	op   batch.Op
	b    *Broker
	t    sendTarget
	recs []byte // the records back to back, each starting with its TOTALSIZE
	// buf holds recs' bytes (getRecordBuf); returned to its pool when the
	// job completes. nil: recs is not pooled.
	buf  *recBuf
	n    int    // number of records in recs
	due  int64  // > 0: one record, stored as a timer entry due then (Unix ms)
	uniq string // UNIQ_KEY of a single message ("" for a batch)
	// batchUniq is a batch's own UNIQ_KEY (the batch header's properties;
	// the Java client's batch() sets one), answered as its transactionId
	// as SendMessageProcessor does for the MessageExtBatch; "" otherwise.
	batchUniq string
	host      netip.AddrPort
	// bodyBytes feeds the throughput metric: the body, or the batch body.
	bodyBytes int
	done      func(SendResult, error)

	// Set by Apply on the writer goroutine, read by Done after it.
	queueOffset int64  // of the first record
	phys        int64  // physical offset of the first record
	ids         []byte // a batch's offsetMsgIds joined with ","
}

// sendJobs recycles sendJobs: a SEND costs no allocation for its writer op.
var sendJobs = sync.Pool{New: func() any { return new(sendJob) }}

// submitSend copies spec into a pooled sendJob and hands it to the writer's
// produce lane; a refusal completes it on the caller's goroutine. The job
// belongs to the writer from Submit until Done, then goes back to
// sendJobs with its records' buffer.
func (b *Broker) submitSend(spec sendJob) {
	j := sendJobs.Get().(*sendJob)
	*j = spec
	j.op = batch.Op{Lane: batch.LaneProduce, Bytes: len(j.recs), Job: j}
	if err := b.Writer.Submit(&j.op); err != nil {
		j.finish(SendResult{}, sendWriteError(err))
	}
}

// finish returns the records' buffer to its pool (the store holds no
// reference to them once the op is written, shed or refused), clears j and
// returns it to sendJobs, then completes the Send with res or err: j must
// not be read once finish starts.
func (j *sendJob) finish(res SendResult, err error) {
	done := j.done
	if j.buf != nil {
		putRecordBuf(j.buf)
	}
	*j = sendJob{}
	sendJobs.Put(j)
	done(res, err)
}

// Apply appends the records to the target queue (or stores the timer
// entry). Writer goroutine.
func (j *sendJob) Apply(tx *popstore.Txn) (err error) {
	if j.due > 0 {
		j.phys, err = tx.PutTimer(j.due, j.t.queueID, j.recs)
		return err
	}
	if j.n > 1 {
		// 56 hex digits is an IPv6 store host's offsetMsgId; one comma each.
		j.ids = make([]byte, 0, j.n*57)
	}
	for off, i := 0, 0; off < len(j.recs); i++ {
		size := int(binary.BigEndian.Uint32(j.recs[off:]))
		qo, phys, err := tx.AppendMessage(j.t.topic, j.t.queueID, j.recs[off:off+size])
		if err != nil {
			return err
		}
		if i == 0 {
			j.queueOffset, j.phys = qo, phys
		}
		if j.n > 1 {
			if i > 0 {
				j.ids = append(j.ids, ',')
			}
			j.ids = codec.AppendOffsetMsgID(j.ids, j.host, phys)
		}
		off += size
	}
	return nil
}

// Done counts the stored messages and completes the Send. Writer's
// completer goroutine.
func (j *sendJob) Done(err error) {
	if err != nil {
		j.finish(SendResult{}, sendWriteError(err))
		return
	}
	b, t := j.b, j.t
	res := SendResult{MsgID: j.uniq, TransactionID: j.uniq, Topic: t.topic, QueueID: t.queueID, Count: j.n}
	if j.batchUniq != "" {
		res.TransactionID = j.batchUniq
	}
	if j.n > 1 {
		res.OffsetMsgID = string(j.ids)
	} else {
		res.OffsetMsgID = codec.OffsetMsgID(j.host, j.phys)
	}
	b.Metrics.PutNums.Add(uint64(j.n))
	kind := "normal"
	if j.due > 0 {
		b.Timers.NoteDurable(j.due)
		b.Metrics.TimerEnqueued.Inc()
		res.DeliverAtMillis, kind = j.due, "delay"
		res.RecallHandle = b.recallHandleOf(t.topic, t.props)
	} else {
		res.QueueOffset = j.queueOffset
	}
	if !t.dlq && !codec.IsRetryTopic(t.topic) {
		in := b.Metrics.in(t.topic, kind, IsSystemTopic(t.topic))
		in.msgs.Add(float64(j.n))
		in.bytes.Add(float64(j.bodyBytes))
	}
	j.finish(res, nil)
}

// sendWriteError maps the writer error of a send (a Submit refusal or the
// op's Done error) to its *Error, as SendMessageProcessor maps the
// PutMessageStatus of the same store state:
//   - shed after WaitTimeMillsInSendQueue → SYSTEM_BUSY (2),
//     "[TIMEOUT_CLEAN_QUEUE]…" (BrokerFastFailure); lane or queued-bytes
//     bound full → SYSTEM_BUSY with the [OVERLOAD] remark;
//   - disk above --disk-space-warning-level-ratio, or the store not
//     writable after a failed write (until the writer's probe reopens it)
//     → SERVICE_NOT_AVAILABLE (14), the code of a Java store that is not
//     writable (disk full), so producers retry on another broker;
//   - writer closed → GO_AWAY; bad names → MESSAGE_ILLEGAL (13); the
//     write that failed itself → SYSTEM_ERROR (1).
func sendWriteError(err error) *Error {
	var qt *batch.QueueTimeoutError
	switch {
	case errors.As(err, &qt):
		return Errorf(codec.SystemBusy, "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: %dms, size of queue: %d",
			qt.Waited.Milliseconds(), qt.Queued)
	case errors.Is(err, batch.ErrBusy), errors.Is(err, batch.ErrClosed):
		return SubmitError("store message", err)
	case errors.Is(err, batch.ErrDiskFull), errors.Is(err, batch.ErrFailed), errors.Is(err, popstore.ErrUnavailable):
		return &Error{Code: codec.ServiceNotAvailable, Remark: "service not available now: the broker's disk is full or its store is not writable; retry on another broker (" + err.Error() + ")"}
	}
	return &Error{Code: WriteErrorCode(err), Remark: "store message failed: " + err.Error()}
}
