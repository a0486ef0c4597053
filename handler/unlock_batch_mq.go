package handler

// UNLOCK_BATCH_MQ (42): the remoting adapter of broker.Broker.UnlockBatch,
// where the behaviour and the response codes are listed
// (AdminBrokerProcessor.unlockBatchMQ).
//
// Header: only the RPC fields (UnlockBatchMqRequestHeader.java: bname).
// Body: UnlockBatchRequestBody, the fields of LockBatchRequestBody; a body
// that is not one → SYSTEM_ERROR (1) "unlock batch mq: <cause>".
//
// Reply: SUCCESS (0) without a body. Java clients send it oneway (on
// rebalance and at shutdown): nothing is sent back then.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleUnlockBatchMQ(c remoting.Conn, req *codec.Command) {
	body, err := codec.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		reply.Code(c, req, codec.SystemError, "unlock batch mq: "+err.Error())
		return
	}
	b.UnlockBatch(lockBatchRequest(&body), func(err error) { replyOutcome(c, req, err) })
}
