package transaction

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// Topic names of RocketMQ's transaction machinery
// (common/.../topic/TopicValidator.java).
const (
	// HalfTopic is the topic a half message is stored under (its record's
	// topic; the CHECK_TRANSACTION_STATE header's topic).
	HalfTopic = "RMQ_SYS_TRANS_HALF_TOPIC"
	// CheckMaxTopic receives halves checked Settings.CheckMax times, or
	// older than the retention, one queue (TCMT_QUEUE_NUMS), perm 6.
	CheckMaxTopic = "TRANS_CHECK_MAX_TIME_TOPIC"
)

// ErrBadHalf means a stored half whose record cannot be decoded or names no
// real topic and queue (REAL_TOPIC, REAL_QID). It is never delivered; the
// loop moves it to CheckMaxTopic when its checks run out.
var ErrBadHalf = errors.New("transaction: half message record unusable")

// IsHalf reports whether a SEND carries a half message, as
// SendMessageProcessor decides: TRAN_MSG=true (Boolean.parseBoolean), and
// not a pre-4.6.1 client's retry of one (reconsumeTimes > 0 with a DELAY
// level). Pure; any goroutine.
func IsHalf(props string, reconsumeTimes int32) bool {
	v, _ := codec.PropertyValue(props, codec.PropertyTransactionPrepared)
	if !strings.EqualFold(v, "true") {
		return false
	}
	if reconsumeTimes > 0 {
		if d, ok := codec.PropertyValue(props, codec.PropertyDelayTimeLevel); ok {
			if n, err := strconv.Atoi(d); err == nil && n > 0 {
				return false
			}
		}
	}
	return true
}

// HalfRecord converts the message a SEND built (real topic and queue,
// properties with TRAN_MSG and PGROUP) into the record stored as a half,
// as TransactionalMessageBridge.parseHalfMessageInner: __transactionId__
// = UNIQ_KEY (when present), REAL_TOPIC and REAL_QID added, the sysFlag's
// transaction bits cleared, topic HalfTopic, queue 0. m is not modified.
// group is PGROUP, else fallbackGroup (the SEND header's producerGroup,
// then also set as PGROUP). Errors: codec's property and encoding errors
// (answer MESSAGE_ILLEGAL), an empty group.
func HalfRecord(m *codec.MessageExt, fallbackGroup string) (record []byte, group string, err error) {
	h := *m
	props := h.Properties
	group, _ = codec.PropertyValue(props, codec.PropertyProducerGroup)
	if group == "" {
		if group = fallbackGroup; group == "" {
			return nil, "", errors.New("transaction: half message without producer group")
		}
		if props, err = codec.SetProperty(props, codec.PropertyProducerGroup, group); err != nil {
			return nil, "", err
		}
	}
	if id, ok := codec.PropertyValue(props, codec.PropertyUniqClientMessageIDKeyIdx); ok && id != "" {
		if props, err = codec.SetProperty(props, codec.PropertyTransactionID, id); err != nil {
			return nil, "", err
		}
	}
	if props, err = codec.SetProperty(props, codec.PropertyRealTopic, h.Topic); err != nil {
		return nil, "", err
	}
	if props, err = codec.SetProperty(props, codec.PropertyRealQueueID, strconv.Itoa(int(h.QueueID))); err != nil {
		return nil, "", err
	}
	h.Properties = props
	h.SysFlag = codec.SetTransactionType(h.SysFlag, codec.SysFlagTransactionNotType)
	h.Topic, h.QueueID = HalfTopic, 0
	h.QueueOffset, h.PhysicalOffset = 0, 0
	record, err = codec.AppendMessage(nil, &h)
	return record, group, err
}

// FirstCheckDelay returns how long after its store time a half is first
// checked, ms: CHECK_IMMUNITY_TIME_IN_SECONDS × 1000 when the property
// is a number (negative counts as 0), else timeoutMillis
// (TransactionalMessageServiceImpl.getImmunityTime).
func FirstCheckDelay(props string, timeoutMillis int64) int64 {
	v, ok := codec.PropertyValue(props, codec.PropertyCheckImmunityTimeInSeconds)
	if !ok {
		return timeoutMillis
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return timeoutMillis
	}
	return max(n, 0) * 1000
}

// ImmunityMillis returns the age past which a half carrying
// CHECK_IMMUNITY_TIME_IN_SECONDS may no longer be decided by the producer
// itself (not from a check), ok=false when the property is absent:
// max(seconds × 1000, timeoutMillis), an unparsable value counting as 0
// (TransactionalMessageUtil.getImmunityTime, used by
// EndTransactionProcessor.rejectCommitOrRollback).
func ImmunityMillis(props string, timeoutMillis int64) (ms int64, ok bool) {
	v, ok := codec.PropertyValue(props, codec.PropertyCheckImmunityTimeInSeconds)
	if !ok || v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		n = 0
	}
	return max(n*1000, timeoutMillis), true
}

// decodeHalf decodes a stored half and the real topic and queue its
// properties name; the check count, when any, becomes its
// TRANSACTION_CHECK_TIMES property (Java keeps the count there).
func decodeHalf(h *popstore.Half) (m codec.MessageExt, topic string, queueID int32, err error) {
	m, _, err = codec.DecodeMessage(h.Record)
	if err != nil {
		return m, "", 0, fmt.Errorf("%w: %v", ErrBadHalf, err)
	}
	topic, _ = m.Property(codec.PropertyRealTopic)
	qs, _ := m.Property(codec.PropertyRealQueueID)
	q, err := strconv.ParseInt(qs, 10, 32)
	if topic == "" || err != nil {
		return m, "", 0, fmt.Errorf("%w: REAL_TOPIC %q, REAL_QID %q", ErrBadHalf, topic, qs)
	}
	if h.Checks > 0 {
		if m.Properties, err = codec.SetProperty(m.Properties, codec.PropertyTransactionCheckTimes, strconv.Itoa(int(h.Checks))); err != nil {
			return m, "", 0, fmt.Errorf("%w: %v", ErrBadHalf, err)
		}
	}
	return m, topic, int32(q), nil
}

// Final is a message ready to be appended: its topic, queue and record.
type Final struct {
	Topic   string
	QueueID int32
	// Props are the record's properties (for delay resolution).
	Props  string
	Record []byte
	// BornTimestamp is the producer's send time, ms (latency metric).
	BornTimestamp int64
}

// CommitRecord builds the message END_TRANSACTION commits, as
// EndTransactionProcessor.endMessageTransaction leaves it in the commit
// log: the real topic and queue, body, flag, born host and time, store
// host and reconsume times of the half; the sysFlag's transaction bits
// set to commit (8); PREPAREDTRANSACTIONOFFSET the half's physical
// offset; store time nowMillis; the half's properties without REAL_TOPIC
// and REAL_QID (endMessageTransaction clears them and a 5.5.1 broker's
// committed message, seen from a consumer, has neither; TRAN_MSG, PGROUP
// and __transactionId__ stay), with TRANSACTION_CHECK_TIMES when it was
// checked. Errors: ErrBadHalf, codec encoding errors.
func CommitRecord(h *popstore.Half, nowMillis int64) (Final, error) {
	m, topic, qid, err := decodeHalf(h)
	if err != nil {
		return Final{}, err
	}
	m.Topic, m.QueueID = topic, qid
	m.Properties = codec.DeleteProperty(codec.DeleteProperty(m.Properties, codec.PropertyRealTopic), codec.PropertyRealQueueID)
	m.SysFlag = codec.SetTransactionType(m.SysFlag, codec.SysFlagTransactionCommit)
	m.PreparedTransactionOffset = h.PhysicalOffset
	m.StoreTimestamp = nowMillis
	m.QueueOffset, m.PhysicalOffset = 0, 0
	return encodeFinal(&m)
}

// encodeFinal encodes m as a Final.
func encodeFinal(m *codec.MessageExt) (Final, error) {
	rec, err := codec.AppendMessage(nil, m)
	if err != nil {
		return Final{}, err
	}
	return Final{Topic: m.Topic, QueueID: m.QueueID, Props: m.Properties, Record: rec, BornTimestamp: m.BornTimestamp}, nil
}

// WithProps re-encodes f with other properties (the delay resolution's).
// Errors: codec decoding or encoding errors.
func (f Final) WithProps(props string) (Final, error) {
	if props == f.Props {
		return f, nil
	}
	m, _, err := codec.DecodeMessage(f.Record)
	if err != nil {
		return Final{}, err
	}
	m.Properties = props
	return encodeFinal(&m)
}

// DiscardRecord builds the copy of a half moved to CheckMaxTopic, as
// DefaultTransactionalMessageCheckListener.toMessageExtBrokerInner: queue
// 0, the half's body, flag, properties (with TRANSACTION_CHECK_TIMES),
// sysFlag, hosts, born time and reconsume times; store time nowMillis.
// A half whose record does not decode cannot be kept: ErrBadHalf.
func DiscardRecord(h *popstore.Half, nowMillis int64) (Final, error) {
	m, _, _, err := decodeHalf(h)
	if err != nil && m.Topic == "" {
		return Final{}, err
	}
	m.Topic, m.QueueID = CheckMaxTopic, 0
	m.StoreTimestamp = nowMillis
	m.QueueOffset, m.PhysicalOffset = 0, 0
	return encodeFinal(&m)
}
