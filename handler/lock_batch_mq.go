package handler

// LOCK_BATCH_MQ (41): the remoting adapter of broker.Broker.LockBatch,
// where the behaviour and the response codes are listed
// (AdminBrokerProcessor.lockBatchMQ).
//
// Header: only the RPC fields (LockBatchMqRequestHeader.java: bname).
// Body: LockBatchRequestBody {"clientId","consumerGroup","mqSet":[
// MessageQueue...],"onlyThisBroker"}; a body that is not one → SYSTEM_ERROR
// (1) "lock batch mq: <cause>".
//
// Reply: SUCCESS (0) with LockBatchResponseBody {"lockOKMQSet":[...]}, the
// queues as the client named them.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleLockBatchMQ(c remoting.Conn, req *codec.Command) {
	body, err := codec.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		reply.Code(c, req, codec.SystemError, "lock batch mq: "+err.Error())
		return
	}
	b.LockBatch(lockBatchRequest(&body), func(locked []codec.MessageQueue, err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = codec.EncodeLockBatchResponseBody(locked)
		reply.Respond(c, req, resp)
	})
}

// lockBatchRequest is the core request of a LOCK_BATCH_MQ or
// UNLOCK_BATCH_MQ body.
func lockBatchRequest(body *codec.LockBatchRequestBody) broker.LockBatchRequest {
	return broker.LockBatchRequest{ConsumerGroup: body.ConsumerGroup, ClientID: body.ClientID,
		Queues: body.MQSet, OnlyThisBroker: body.OnlyThisBroker}
}
