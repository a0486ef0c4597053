package handler

// HEART_BEAT (34).
//
// Header: none of its own (HeartbeatRequestHeader.java). Body: JSON
// HeartbeatData {clientID, producerDataSet, consumerDataSet, ...} from the
// Java or the Go client (codec.DecodeHeartbeatData accepts both).
//
// Behaviour (broker/.../processor/ClientManageProcessor.java heartBeat):
//   - Each consumer group is registered in the ClientTable under the
//     sending connection with its consumeType, messageModel,
//     consumeFromWhere and subscriptions (the last heartbeat wins);
//     GET_CONSUMER_LIST_BY_GROUP and QUERY_ASSIGNMENT read it.
//   - Each consumer group's retry topic %RETRY%<group> is created (1 queue,
//     perm 6) so its route exists (the Java push consumer subscribes it;
//     pop-scenarios RET-06), and the group's configuration
//     (SubscriptionGroupConfig defaults) is stored once, as a Java broker with
//     autoCreateSubscriptionGroup does. Both writes go to the writer's
//     background lane; the reply does not wait for them, and a full lane
//     only logs (the next heartbeat, every 30 s, tries again).
//   - Each producer group is registered for the client.
//   - The reply carries version 479 (V5_3_3), which the client records as
//     the broker version, and IS_SUPPORT_HEART_BEAT_V2=false, so clients keep
//     sending full heartbeats.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) when the body is not a
// heartbeat or names no clientID.

import (
	"fmt"
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// defaultGroupMeta is SubscriptionGroupConfig's defaults for an
// auto-created consumer group.
func defaultGroupMeta(group string) popstore.GroupMeta {
	return popstore.GroupMeta{
		GroupName:                      group,
		ConsumeEnable:                  true,
		ConsumeFromMinEnable:           true,
		ConsumeBroadcastEnable:         true,
		RetryQueueNums:                 retryQueueNums,
		RetryMaxTimes:                  16,
		WhichBrokerWhenConsumeSlowly:   1,
		NotifyConsumerIdsChangedEnable: true,
		ConsumeTimeoutMinute:           15,
	}
}

// maxHeartbeatBodyBytes bounds the HEART_BEAT body decoded on the event loop
// (1 MiB; a client with a hundred subscriptions sends a few tens of KiB).
// A larger heartbeat is INVALID_PARAMETER (29) and registers nothing.
const maxHeartbeatBodyBytes = 1 << 20

func (b *Broker) handleHeartBeat(c remoting.Conn, req *codec.Command) {
	if len(req.Body) > maxHeartbeatBodyBytes {
		respondCode(c, req, codec.InvalidParameter, fmt.Sprintf("heartbeat body of %d bytes exceeds %d", len(req.Body), maxHeartbeatBodyBytes))
		return
	}
	hb, err := codec.DecodeHeartbeatData(req.Body)
	if err == nil && hb.ClientID == "" {
		err = &codec.FieldError{Field: "clientID", Err: codec.ErrMissingField}
	}
	if err != nil {
		respondCode(c, req, codec.SystemError, "heartbeat: "+err.Error())
		return
	}
	ch := ClientChannel{ClientID: hb.ClientID, ConnID: c.ID(), Language: req.Language, Version: req.Version}
	if a := c.RemoteAddr(); a != nil {
		ch.RemoteAddr = a.String()
	}
	for _, cd := range hb.ConsumerDataSet {
		if codec.ValidateGroup(cd.GroupName) != nil {
			b.Log.Warn().Str("consumerGroup", cd.GroupName).Str("clientId", hb.ClientID).Msg("heartbeat: invalid consumer group name ignored")
			continue
		}
		b.ensureGroup(cd.GroupName)
		if _, err := b.Topics.EnsureRetryTopic(cd.GroupName); err != nil {
			b.Log.Warn().Err(err).Str("consumerGroup", cd.GroupName).Msg("heartbeat: retry topic not created")
		}
		reg := ConsumerRegistration{
			Group: cd.GroupName, ConsumeType: cd.ConsumeType, MessageModel: cd.MessageModel,
			ConsumeFromWhere: cd.ConsumeFromWhere, Subscriptions: make([]Subscription, 0, len(cd.SubscriptionDataSet)),
		}
		for _, s := range cd.SubscriptionDataSet {
			reg.Subscriptions = append(reg.Subscriptions, Subscription{
				Topic: s.Topic, SubString: s.SubString, ExpressionType: s.ExpressionType,
				Tags: s.TagsSet, SubVersion: s.SubVersion,
			})
		}
		b.Clients.RegisterConsumer(reg, ch)
	}
	for _, pd := range hb.ProducerDataSet {
		if pd.GroupName != "" {
			b.Clients.RegisterProducer(pd.GroupName, ch)
		}
	}
	resp := codec.NewResponse(req, codec.Success, "")
	codec.HeartbeatResponseHeader{}.Encode(resp)
	respond(c, req, resp)
}

// ensureGroup stores the default configuration of consumerGroup unless the
// store already has one. Fire and forget on the background lane.
func (b *Broker) ensureGroup(group string) {
	if _, ok := b.Store.Group(group); ok {
		return
	}
	g := defaultGroupMeta(group)
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 256,
		Apply: func(tx *popstore.Txn) error {
			if _, ok := tx.Group(group); ok {
				return nil
			}
			return tx.PutGroup(g)
		},
		Done: func(err error) {
			if err != nil {
				b.Log.Warn().Err(err).Str("consumerGroup", group).Msg("consumer group config not stored")
			}
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		b.Log.Warn().Err(err).Str("consumerGroup", group).Msg("consumer group config not queued")
	}
}
