package codec

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
)

// BatchAck is one entry of a BATCH_ACK_MESSAGE (200151) body
// (remoting/.../protocol/body/BatchAck.java): all receipts of one
// (retryFlag, queueId, checkpoint start offset, popTime) folded into a bit
// set. Bit i of Bits acks queue offset StartOffset + i.
type BatchAck struct {
	ConsumerGroup string    // c / consumerGroup
	Topic         string    // t / topic: the original topic, never the retry topic
	RetryFlag     RetryFlag // r / retry: "0", "1" or "2"
	StartOffset   int64     // so / startOffset: receipt field 0
	QueueID       int32     // q / queueId
	ReviveQueueID int32     // rq / reviveQueueId: receipt field 3
	PopTime       int64     // pt / popTime: receipt field 1, milliseconds
	InvisibleTime int64     // it / invisibleTime: receipt field 2, milliseconds
	// Bits is java.util.BitSet.toByteArray(): bit i is byte i/8, bit i%8
	// (least significant first). On the wire: standard Base64 with padding.
	Bits []byte
}

// BatchAckBody is a BATCH_ACK_MESSAGE body (BatchAckMessageRequestBody.java):
// {"acks":[...],"brokerName":"..."}.
type BatchAckBody struct {
	BrokerName string
	Acks       []BatchAck
}

// SetAcked sets the bit of every queue offset in offsets relative to
// a.StartOffset; offsets below StartOffset are an error (nothing is changed).
func (a *BatchAck) SetAcked(offsets ...int64) error {
	for _, o := range offsets {
		if o < a.StartOffset || o-a.StartOffset > 1<<20 {
			return fmt.Errorf("codec: offset %d not within 2^20 after startOffset %d", o, a.StartOffset)
		}
	}
	for _, o := range offsets {
		i := int(o - a.StartOffset)
		for len(a.Bits) <= i/8 {
			a.Bits = append(a.Bits, 0)
		}
		a.Bits[i/8] |= 1 << (i % 8)
	}
	return nil
}

// AckedOffsets returns StartOffset+i for every set bit i < maxBits, in
// ascending order. maxBits bounds the work a hostile body can cause (the
// Java broker's checkpoints span at most 32 messages); bits at or beyond it
// are ignored, as docs/SCENARIOS.md BAT-01 expects.
func (a *BatchAck) AckedOffsets(maxBits int) []int64 {
	var out []int64
	for i := 0; i < maxBits && i/8 < len(a.Bits); i++ {
		if a.Bits[i/8]&(1<<(i%8)) != 0 {
			out = append(out, a.StartOffset+int64(i))
		}
	}
	return out
}

// trimBits drops trailing zero bytes as BitSet.toByteArray does.
func trimBits(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// AppendBatchAckBody appends the JSON body the way the Java client's
// fastjson writes it: compact, members sorted (acks, brokerName; inside an
// entry b, c, it, pt, q, r, rq, so, t), bit set trimmed and Base64-encoded
// (example E9).
func AppendBatchAckBody(dst []byte, body *BatchAckBody) []byte {
	dst = append(dst, `{"acks":[`...)
	for i := range body.Acks {
		a := &body.Acks[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"b":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, trimBits(a.Bits))
		dst = append(dst, `","c":`...)
		dst = appendJSONString(dst, a.ConsumerGroup)
		dst = append(dst, `,"it":`...)
		dst = strconv.AppendInt(dst, a.InvisibleTime, 10)
		dst = append(dst, `,"pt":`...)
		dst = strconv.AppendInt(dst, a.PopTime, 10)
		dst = append(dst, `,"q":`...)
		dst = strconv.AppendInt(dst, int64(a.QueueID), 10)
		dst = append(dst, `,"r":"`...)
		dst = append(dst, '0'+byte(a.RetryFlag))
		dst = append(dst, `","rq":`...)
		dst = strconv.AppendInt(dst, int64(a.ReviveQueueID), 10)
		dst = append(dst, `,"so":`...)
		dst = strconv.AppendInt(dst, a.StartOffset, 10)
		dst = append(dst, `,"t":`...)
		dst = appendJSONString(dst, a.Topic)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"brokerName":`...)
	dst = appendJSONString(dst, body.BrokerName)
	return append(dst, '}')
}

// batchAckJSON accepts both the short and the long member names.
type batchAckJSON struct {
	C  *string          `json:"c"`
	C2 *string          `json:"consumerGroup"`
	T  *string          `json:"t"`
	T2 *string          `json:"topic"`
	R  *json.RawMessage `json:"r"`
	R2 *json.RawMessage `json:"retry"`
	SO *int64           `json:"so"`
	S2 *int64           `json:"startOffset"`
	Q  *int32           `json:"q"`
	Q2 *int32           `json:"queueId"`
	RQ *int32           `json:"rq"`
	R3 *int32           `json:"reviveQueueId"`
	PT *int64           `json:"pt"`
	P2 *int64           `json:"popTime"`
	IT *int64           `json:"it"`
	I2 *int64           `json:"invisibleTime"`
	B  *[]byte          `json:"b"`
	B2 *[]byte          `json:"bitSet"`
}

func pick[T any](short, long *T) (T, bool) {
	if short != nil {
		return *short, true
	}
	if long != nil {
		return *long, true
	}
	var zero T
	return zero, false
}

// DecodeBatchAckBody parses a BATCH_ACK_MESSAGE body. Unknown members are
// ignored; long member names are accepted for short ones; "r" may be a
// string or a number. An empty body gives an empty BatchAckBody (the
// handler answers NO_MESSAGE for that and for "acks":[]). Errors wrap
// ErrInvalidField and name the entry and member: malformed JSON, a missing
// c/t/r/so/q/rq/pt/it, a bad Base64 bit set or a retry flag other than 0-2.
func DecodeBatchAckBody(b []byte) (BatchAckBody, error) {
	var out BatchAckBody
	if len(b) == 0 {
		return out, nil
	}
	var raw struct {
		BrokerName string         `json:"brokerName"`
		Acks       []batchAckJSON `json:"acks"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return out, fmt.Errorf("%w: batch ack body: %v", ErrInvalidField, err)
	}
	out.BrokerName = raw.BrokerName
	out.Acks = make([]BatchAck, 0, len(raw.Acks))
	for i := range raw.Acks {
		j := &raw.Acks[i]
		var a BatchAck
		var ok [8]bool
		a.ConsumerGroup, ok[0] = pick(j.C, j.C2)
		a.Topic, ok[1] = pick(j.T, j.T2)
		var r json.RawMessage
		r, ok[2] = pick(j.R, j.R2)
		a.StartOffset, ok[3] = pick(j.SO, j.S2)
		a.QueueID, ok[4] = pick(j.Q, j.Q2)
		a.ReviveQueueID, ok[5] = pick(j.RQ, j.R3)
		a.PopTime, ok[6] = pick(j.PT, j.P2)
		a.InvisibleTime, ok[7] = pick(j.IT, j.I2)
		a.Bits, _ = pick(j.B, j.B2)
		names := [...]string{"c", "t", "r", "so", "q", "rq", "pt", "it"}
		for k, present := range ok {
			if !present {
				return BatchAckBody{}, fmt.Errorf("%w: batch ack entry %d: missing %q", ErrInvalidField, i, names[k])
			}
		}
		rs := string(r)
		if len(rs) >= 2 && rs[0] == '"' {
			rs = rs[1 : len(rs)-1]
		}
		var fok bool
		if a.RetryFlag, fok = ParseRetryFlag(rs); !fok {
			return BatchAckBody{}, fmt.Errorf("%w: batch ack entry %d: retry flag %s", ErrInvalidField, i, string(r))
		}
		out.Acks = append(out.Acks, a)
	}
	return out, nil
}
