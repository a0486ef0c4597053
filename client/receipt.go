package client

import (
	"fmt"
	"strings"

	"github.com/popshim/popshim/codec"
)

// Receipt is what ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME need to name
// one popped message: the real topic (the pop retry topic for retry
// messages), queueId, the message's queueOffset and the receipt handle
// (extraInfo, 8 space-separated fields; remoting/.../header/ExtraInfoUtil.java).
type Receipt struct {
	Topic     string
	QueueID   int32
	Offset    int64
	ExtraInfo string
}

// ReceiptsFromPop builds the receipts of a SUCCESS POP_MESSAGE response the
// way the Java client does (client/.../impl/MQClientAPIImpl.java,
// processPopResponse): a message that carries a POP_CK property keeps
// it; otherwise, with startOffsetInfo present, field 0 comes from
// startOffsetInfo and field 7 from msgOffsetInfo by the message's position
// among the body's messages of the same (retryFlag, queueId); without it,
// field 0 is the queueOffset of the first message of that topic+queue.
// topic and group are the POP request's; brokerName is the broker the
// client addressed (field 5). The receipts are appended to dst in body
// order. Errors (prefixed "client: "): a header or body that does not decode, or an
// offset-info entry missing for a returned message (a Java client fails the
// whole pop then too). Any goroutine; resp is only read.
func ReceiptsFromPop(dst []Receipt, resp *codec.Command, topic, group, brokerName string) ([]Receipt, error) {
	h, err := codec.DecodePopMessageResponseHeader(resp.ExtFields)
	if err != nil {
		return dst, fmt.Errorf("client: pop response header: %w", err)
	}
	start, err := codec.ParseStartOffsetInfo(h.StartOffsetInfo)
	if err != nil {
		return dst, fmt.Errorf("client: pop response: %w", err)
	}
	offs, err := codec.ParseMsgOffsetInfo(h.MsgOffsetInfo)
	if err != nil {
		return dst, fmt.Errorf("client: pop response: %w", err)
	}
	seen := map[codec.QueueKey]int{}    // messages of each key so far (new path)
	first := map[codec.QueueKey]int64{} // first queueOffset of each key (old path)
	var buf [160]byte
	for off := 0; off < len(resp.Body); {
		m, n, err := codec.UnsafeDecodeMessage(resp.Body[off:])
		if err != nil {
			return dst, fmt.Errorf("client: pop body at offset %d: %w", off, err)
		}
		off += n
		flag := codec.RetryFlagOfTopic(m.Topic)
		if ck, ok := m.Property(codec.PropertyPopCK); ok {
			ei, err := codec.ParseExtraInfo(ck)
			if err != nil {
				return dst, fmt.Errorf("client: POP_CK of queue %d offset %d: %w", m.QueueID, m.QueueOffset, err)
			}
			dst = append(dst, Receipt{Topic: codec.RealTopic(topic, group, ei.RetryFlag), QueueID: ei.QueueID,
				Offset: ei.QueueOffset, ExtraInfo: strings.Clone(ck)})
			continue
		}
		key := codec.QueueKey{Flag: flag, QueueID: m.QueueID}
		ei := codec.ExtraInfo{PopTime: h.PopTime, InvisibleTime: h.InvisibleTime, ReviveQid: h.ReviveQid,
			RetryFlag: flag, BrokerName: brokerName, QueueID: m.QueueID, QueueOffset: m.QueueOffset}
		if h.StartOffsetInfo != "" {
			ck, ok1 := start[key]
			list, ok2 := offs[key]
			i := seen[key]
			if !ok1 || !ok2 || i >= len(list) {
				return dst, fmt.Errorf("client: pop response: no offset info for retryFlag %s queueId %d (message %d of that queue)", flag, m.QueueID, i)
			}
			seen[key] = i + 1
			ei.CkQueueOffset, ei.QueueOffset = ck, list[i]
		} else {
			if _, ok := first[key]; !ok {
				first[key] = m.QueueOffset
			}
			ei.CkQueueOffset = first[key]
		}
		dst = append(dst, Receipt{Topic: codec.RealTopic(topic, group, flag), QueueID: ei.QueueID,
			Offset: ei.QueueOffset, ExtraInfo: string(codec.AppendExtraInfo(buf[:0], &ei))})
	}
	return dst, nil
}
