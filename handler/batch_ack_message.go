package handler

// BATCH_ACK_MESSAGE (200151): the remoting adapter of
// broker.Broker.BatchAck, where the behaviour and the response codes are
// listed (broker/.../processor/AckMessageProcessor.java, batch branch).
//
// No header. Body: JSON {"brokerName":..,"acks":[{c,t,r,so,q,rq,pt,it,b}]}
// (codec.DecodeBatchAckBody; long member names accepted), b a Base64 Java
// BitSet, bit i acking queue offset so+i. Decoded on the event loop:
//   - an empty or missing body → NO_MESSAGE (208) "body is null";
//   - a body over maxBatchAckBodyBytes → INVALID_PARAMETER (29) giving the
//     size, nothing acked;
//   - a body that does not decode → MESSAGE_ILLEGAL (13) (a definite
//     answer: retrying cannot help).
//
// Reply: a bare response, SUCCESS once every delete is durable, else the
// error's code and remark.

import (
	"fmt"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// maxBatchAckBodyBytes bounds the BATCH_ACK body decoded on the event loop
// (256 KiB, about 1,700 entries; a Java client sends a few dozen). A larger
// body is INVALID_PARAMETER (29) and nothing is acked, so one request cannot
// stall every connection of its loop while its JSON is parsed.
const maxBatchAckBodyBytes = 256 << 10

func (b *Broker) handleBatchAckMessage(c remoting.Conn, req *codec.Command) {
	if len(req.Body) == 0 {
		reply.Code(c, req, codec.NoMessage, "body is null")
		return
	}
	if len(req.Body) > maxBatchAckBodyBytes {
		reply.Code(c, req, codec.InvalidParameter, fmt.Sprintf("batch ack body of %d bytes exceeds %d", len(req.Body), maxBatchAckBodyBytes))
		return
	}
	body, err := codec.DecodeBatchAckBody(req.Body)
	if err != nil {
		reply.Code(c, req, codec.MessageIllegal, "invalid batch ack body: "+err.Error())
		return
	}
	b.BatchAck(broker.BatchAckRequest{Acks: body.Acks}, func(err error) { replyAck(c, req, err) })
}
