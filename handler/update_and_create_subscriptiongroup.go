package handler

// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200): the remoting adapter of
// broker.Broker.UpdateSubscriptionGroups, where the behaviour and the
// response codes are listed (AdminBrokerProcessor.updateAndCreateSubscriptionGroup
// with SubscriptionGroupManager.updateSubscriptionGroupConfig).
//
// Header: none. Body: one SubscriptionGroupConfig JSON
// (remoting/.../protocol/subscription/SubscriptionGroupConfig.java, read
// by codec.DecodeSubscriptionGroupConfig: members missing from the body
// take Java's defaults, unknown members are ignored). mqadmin updateSubGroup
// always sends every member. An empty body (or JSON null) stores nothing
// and answers SUCCESS, as a Java broker does; an undecodable body →
// SYSTEM_ERROR (1) "subscription group body: <cause>".
//
// Reply: the bare code and remark, once the configuration is durable.

import (
	"bytes"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleUpdateAndCreateSubscriptionGroup(c remoting.Conn, req *codec.Command) {
	if body := bytes.TrimSpace(req.Body); len(body) == 0 || string(body) == "null" {
		reply.Code(c, req, codec.Success, "")
		return
	}
	cfg, err := codec.DecodeSubscriptionGroupConfig(req.Body)
	if err != nil {
		reply.Code(c, req, codec.SystemError, "subscription group body: "+err.Error())
		return
	}
	b.UpdateSubscriptionGroups(broker.UpdateSubscriptionGroupsRequest{Configs: []codec.SubscriptionGroupConfig{cfg}},
		func(err error) { replyOutcome(c, req, err) })
}
