package handler

// UPDATE_AND_CREATE_TOPIC (17): the remoting adapter of
// broker.Broker.CreateTopic, where the behaviour and the response codes are
// listed (AdminBrokerProcessor.updateAndCreateTopic).
//
// Header (CreateTopicRequestHeader.java): topic, readQueueNums,
// writeQueueNums, perm (required); defaultTopic, topicFilterType,
// topicSysFlag, order, attributes ("+key=value,-key"), force (optional;
// defaultTopic and force are not used). An undecodable header →
// SYSTEM_ERROR (1) naming the field.
//
// With --namesrv-addr the core's topic registrar is the name-server
// Registrar (installed by NewBroker): the reply waits for a
// REGISTER_BROKER that carries the new table (Registrar.RegisterNow), at
// most createRegisterTimeout, and goes out from the registrar's or a timer
// goroutine.
//
// Reply: the bare code and remark.

import (
	"time"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// createRegisterTimeout bounds how long UPDATE_AND_CREATE_TOPIC waits for
// the name servers to acknowledge the registration of the new topic.
const createRegisterTimeout = 3 * time.Second

func (b *Broker) handleUpdateAndCreateTopic(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeCreateTopicRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.CreateTopic(broker.CreateTopicRequest{
		Topic: h.Topic, ReadQueueNums: h.ReadQueueNums, WriteQueueNums: h.WriteQueueNums, Perm: h.Perm,
		TopicFilterType: h.TopicFilterType, TopicSysFlag: h.TopicSysFlag, Order: h.Order, Attributes: h.Attributes,
	}, func(err error) { replyOutcome(c, req, err) })
}
