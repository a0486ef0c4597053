package broker

import (
	"errors"
	"fmt"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// Receipt is an ACK or CHANGE target after validation: the decoded handle
// and the key of the checkpoint it names (the exact key, as PopConsumerService:
// visibleAt from the handle, group/topic/queue/offset from the header).
type Receipt struct {
	EI  codec.ExtraInfo        // the parsed receipt handle (extraInfo)
	Key popstore.CheckpointKey // the checkpoint it names
}

// ReceiptError is a receipt-handle validation failure (an *Error).
type ReceiptError = Error

// CheckReceipt validates the target of an ACK (change=false) or a CHANGE
// (change=true) against in-memory state only, so it runs on the event loop.
// Checks, in the Java broker's order, then popshim's handle checks:
//   - topic unknown → TOPIC_NOT_EXIST (17);
//   - queueId < 0 or ≥ readQueueNums → MESSAGE_ILLEGAL (13);
//   - offset < minOffset, or > maxOffset (ACK) / ≥ maxOffset (CHANGE,
//     RocketMQ PR #9186) → NO_MESSAGE (208);
//   - a consumerGroup POP would refuse (codec.ValidateGroup: empty, over
//     MaxGroupLength, a character outside RocketMQ's name set) →
//     INVALID_PARAMETER (29), as POP answers it;
//   - a handle that does not parse, names another broker, carries a
//     reviveQid popshim did not issue (it issues 0, and 999 for orderly
//     POPs: Receipt.EI.IsOrder, whose Key is then unused), or whose
//     queueId / queueOffset disagree with the header →
//     MESSAGE_ILLEGAL (13): a definite, non-retriable "invalid receipt
//     handle" (docs/SCENARIOS.md ACK-08), and nothing is touched;
//   - a handle whose fields cannot describe one checkpoint (CheckHandle:
//     start offset above the message offset or negative, popTime ≤ 0,
//     invisibleTime outside [0, MaxInvisibleTimeMillis]) → MESSAGE_ILLEGAL
//     (13), the same definite answer.
func (s *Service) CheckReceipt(group, topic string, queueID int32, offset int64, extraInfo string, change bool) (Receipt, *ReceiptError) {
	ei, err := codec.ParseExtraInfo(extraInfo)
	return s.checkParsedReceipt(group, topic, queueID, offset, ei, err, change)
}

// receiptOf is CheckReceipt of an ACK's handle, parsed once by the caller
// when it set AckRequest.HasReceipt.
func (s *Service) receiptOf(r *AckRequest) (Receipt, *ReceiptError) {
	if r.HasReceipt {
		return s.checkParsedReceipt(r.ConsumerGroup, r.Topic, r.QueueID, r.Offset, r.Receipt, nil, false)
	}
	return s.CheckReceipt(r.ConsumerGroup, r.Topic, r.QueueID, r.Offset, r.ExtraInfo, false)
}

// checkParsedReceipt is CheckReceipt of a handle already parsed into ei
// (perr: the parse error, nil when it parsed).
func (s *Service) checkParsedReceipt(group, topic string, queueID int32, offset int64, ei codec.ExtraInfo, perr error, change bool) (Receipt, *ReceiptError) {
	meta, ok := s.Topics.Get(topic)
	if !ok {
		return Receipt{}, &ReceiptError{codec.TopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please!", topic)}
	}
	if queueID < 0 || queueID >= meta.ReadQueueNums {
		return Receipt{}, &ReceiptError{codec.MessageIllegal, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", queueID, topic, meta.ReadQueueNums)}
	}
	minOff, maxOff := s.Store.MinOffset(topic, queueID), s.Store.MaxOffset(topic, queueID)
	if offset < minOff || offset > maxOff || (change && offset == maxOff) {
		return Receipt{}, &ReceiptError{codec.NoMessage, fmt.Sprintf("offset is illegal, key:%s@%d, offset:%d, minOffset:%d, maxOffset:%d", topic, queueID, offset, minOff, maxOff)}
	}
	if err := codec.ValidateGroup(group); err != nil {
		return Receipt{}, &ReceiptError{codec.InvalidParameter, err.Error()}
	}
	err := perr
	if err == nil {
		err = ei.CheckBroker(s.Settings.BrokerName)
	}
	switch {
	case err != nil:
	case ei.ReviveQid != 0 && !ei.IsOrder():
		err = fmt.Errorf("reviveQid %d was not issued by this broker", ei.ReviveQid)
	case ei.QueueID != queueID || ei.QueueOffset != offset:
		err = fmt.Errorf("handle names queue %d offset %d, request names queue %d offset %d", ei.QueueID, ei.QueueOffset, queueID, offset)
	default:
		err = CheckHandle(ei.CkQueueOffset, ei.QueueOffset, ei.PopTime, ei.InvisibleTime)
	}
	if err != nil {
		return Receipt{}, &ReceiptError{codec.MessageIllegal, "invalid receipt handle: " + err.Error()}
	}
	return Receipt{EI: ei, Key: popstore.CheckpointKey{
		VisibleAtMillis: ei.PopTime + ei.InvisibleTime, Group: group, Topic: topic, QueueId: queueID, QueueOffset: offset,
	}}, nil
}

// WriteErrorCode maps the error a writer op completed with to a response
// code: invalid names → MESSAGE_ILLEGAL (13), anything else (failed or
// rejected write) → SYSTEM_ERROR (1).
func WriteErrorCode(err error) int32 {
	if errors.Is(err, popstore.ErrBadName) {
		return codec.MessageIllegal
	}
	return codec.SystemError
}

// MaxInvisibleTimeMillis is the largest invisibleTime (ms) POP and CHANGE
// accept: 10 years. It only keeps popTime + invisibleTime from overflowing
// the checkpoint key's signed 64-bit visibleAt (a key past the overflow
// would sort before every scan and never revive); the Java broker has no
// bound.
const MaxInvisibleTimeMillis int64 = 10 * 365 * 24 * 3600 * 1000

// CheckInvisibleTime answers INVALID_PARAMETER (29) for an invisibleTime
// (ms) that is negative or above MaxInvisibleTimeMillis, naming the field.
func CheckInvisibleTime(ms int64) *ReceiptError {
	if ms < 0 || ms > MaxInvisibleTimeMillis {
		return &ReceiptError{codec.InvalidParameter, fmt.Sprintf("invisibleTime %d is out of range [0, %d]", ms, MaxInvisibleTimeMillis)}
	}
	return nil
}

// CheckHandle returns an error when receipt fields cannot describe one
// checkpoint that popshim (or a Java broker, or a client rebuilding the
// handle after a CHANGE) issued, nil otherwise. Offsets are queue offsets,
// times Unix ms and ms. Refused:
//   - ckOffset (field 0, the checkpoint's start offset) < 0, or above
//     msgOffset (field 7): a POP's start offset is the first offset it
//     returned from the queue, and a CHANGE reply's handle repeats the
//     message offset (ExtraInfoUtil.buildExtraInfo with the request
//     offset), so field 0 ≤ field 7 always. msgOffset far above ckOffset is
//     legal (a tag filter skipped messages in between);
//   - popTime ≤ 0: a broker clock reading is never 0;
//   - invisibleTime < 0 or above MaxInvisibleTimeMillis: no POP or CHANGE
//     accepts it (0 is legal: CHANGE to 0 makes the message visible now).
//
// The proxy's ninth field and the retry flag are not checked. BATCH_ACK
// entries pass msgOffset = ckOffset (their offsets are so + bit index).
// Any goroutine; allocates only on error.
func CheckHandle(ckOffset, msgOffset, popTime, invisibleTime int64) error {
	switch {
	case ckOffset < 0 || ckOffset > msgOffset:
		return fmt.Errorf("checkpoint start offset %d cannot hold message offset %d", ckOffset, msgOffset)
	case popTime <= 0:
		return fmt.Errorf("popTime %d is not a broker clock reading", popTime)
	case invisibleTime < 0 || invisibleTime > MaxInvisibleTimeMillis:
		return fmt.Errorf("invisibleTime %d is out of range [0, %d]", invisibleTime, MaxInvisibleTimeMillis)
	}
	return nil
}
