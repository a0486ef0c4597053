package handler

// HEART_BEAT (34).
//
// Header: none of its own (HeartbeatRequestHeader.java). Body: JSON
// HeartbeatData {clientID, producerDataSet, consumerDataSet, ...} from the
// Java or the Go client (codec.DecodeHeartbeatData accepts both).
//
// Behaviour (broker/.../processor/ClientManageProcessor.java heartBeat):
//   - Bounds first (RocketMQ has none; a Java client sends one heartbeat
//     listing its few groups): more than --max-heartbeat-groups entries in
//     consumerDataSet or in producerDataSet, or more than
//     --max-heartbeat-subscriptions in one consumer group's
//     subscriptionDataSet, refuses the whole heartbeat before anything is
//     registered; so does a heartbeat that would leave its connection with
//     more than --max-conn-client-channels group memberships (memberships it
//     only refreshes do not count as added). A refused heartbeat neither
//     registers, refreshes nor removes anything and creates no topic.
//   - Entries with names RocketMQ's TopicValidator rejects are skipped, the
//     rest of the heartbeat is served and the answer is still SUCCESS, as a
//     Java broker does (its findSubscriptionGroupConfig returns null for an
//     illegal group and heartBeat skips that consumer): a consumer group
//     failing codec.ValidateGroup (empty, over 120 characters, characters
//     outside [%|a-zA-Z0-9_-]) is not registered and gets no retry topic and
//     no group configuration; a producer group failing it is not registered
//     either (a Java broker would register it, but no RocketMQ client can
//     send such a name and popshim uses producer registrations only for
//     counts); a subscription whose topic fails RocketMQ's topic rules is
//     dropped from its group, which is otherwise registered (such a topic
//     cannot exist, so the subscription could never match). One warn line
//     per heartbeat counts what was skipped.
//   - Each consumer group is registered in the ClientTable under the
//     sending connection with its consumeType, messageModel,
//     consumeFromWhere and subscriptions (the last heartbeat wins);
//     GET_CONSUMER_LIST_BY_GROUP and QUERY_ASSIGNMENT read it.
//   - Each registered consumer group's retry topic %RETRY%<group> is created
//     (1 queue, perm 6) so its route exists (the Java push consumer
//     subscribes it; pop-scenarios RET-06), and the group's configuration
//     (SubscriptionGroupConfig defaults) is stored once, as a Java broker
//     with autoCreateSubscriptionGroup does. Both writes go to the writer's
//     background lane; the reply does not wait for them, and a full lane
//     only logs (the next heartbeat, every 30 s, tries again). Nothing else
//     is created: subscribed topics are recorded, never made, as in
//     RocketMQ.
//   - Each producer group is registered for the client.
//   - The reply carries version 479 (V5_3_3), which the client records as
//     the broker version, and IS_SUPPORT_HEART_BEAT_V2=false, so clients keep
//     sending full heartbeats.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) when the body is not a
// heartbeat or names no clientID; INVALID_PARAMETER (29), the code RocketMQ
// gives a request whose parameters fail a check, when the body exceeds
// 1 MiB or the heartbeat exceeds one of the bounds above (the remark names
// the flag and both numbers). A client only logs a non-SUCCESS heartbeat
// reply and keeps working.

import (
	"fmt"
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// defaultGroupMeta is SubscriptionGroupConfig's defaults for an
// auto-created consumer group, with retryMaxTimes from
// --max-reconsume-times (RocketMQ's default is 16).
func defaultGroupMeta(group string, retryMaxTimes int32) popstore.GroupMeta {
	return popstore.GroupMeta{
		GroupName:                      group,
		ConsumeEnable:                  true,
		ConsumeFromMinEnable:           true,
		ConsumeBroadcastEnable:         true,
		RetryQueueNums:                 retryQueueNums,
		RetryMaxTimes:                  retryMaxTimes,
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
	if remark := b.hbLimits.exceeded(&hb); remark != "" {
		b.Log.Warn().Str("clientId", clipLog(hb.ClientID)).Str("remark", remark).Msg("heartbeat refused")
		respondCode(c, req, codec.InvalidParameter, remark)
		return
	}
	ch := ClientChannel{ClientID: hb.ClientID, ConnID: c.ID(), Language: req.Language, Version: req.Version}
	if a := c.RemoteAddr(); a != nil {
		ch.RemoteAddr = a.String()
	}
	reg, skipped := planHeartbeat(&hb, ch)
	if skipped.count > 0 {
		b.Log.Warn().Str("clientId", clipLog(hb.ClientID)).Int("skipped", skipped.count).Str("first", skipped.first).
			Msg("heartbeat: entries with invalid names skipped")
	}
	if err := b.Clients.RegisterHeartbeat(reg, b.hbLimits.connChannels); err != nil {
		b.Log.Warn().Err(err).Str("clientId", clipLog(hb.ClientID)).Str("remote", ch.RemoteAddr).Msg("heartbeat refused")
		respondCode(c, req, codec.InvalidParameter, "heartbeat: "+err.Error())
		return
	}
	for _, cr := range reg.Consumers {
		b.ensureGroup(cr.Group)
		if _, err := b.Topics.EnsureRetryTopic(cr.Group); err != nil {
			b.Log.Warn().Err(err).Str("consumerGroup", cr.Group).Msg("heartbeat: retry topic not created")
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
	g := defaultGroupMeta(group, b.pop.maxReconsumeTimes)
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
