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
//   - Each consumer group is looked up in the group table (meta.GroupTable
//     Find, findSubscriptionGroupConfig): an unknown group is created with
//     SubscriptionGroupConfig's defaults when --auto-create-subscription-group
//     is on (or its name starts with CID_RMQ_SYS_); otherwise its entry is
//     skipped silently, as a Java broker does: not registered, no retry
//     topic, the reply still SUCCESS (such a heartbeat is not cached, so the
//     group registers once an admin creates it).
//   - Each registered consumer group's retry topic %RETRY%<group> is created
//     with the group's retryQueueNums queues (default 1), perm 6, so its
//     route exists (the Java push consumer subscribes it; docs/SCENARIOS.md
//     RET-06); an existing retry topic is left as it is. Group and topic
//     writes go to the writer's background lane; the reply does not wait for
//     them, and a full lane only logs (the next heartbeat, every 30 s, tries
//     again). Nothing else is created: subscribed topics are recorded, never
//     made, as in RocketMQ.
//   - Each producer group is registered for the client.
//   - The reply carries version 479 (V5_3_3), which the client records as
//     the broker version, and IS_SUPPORT_HEART_BEAT_V2=false, so clients keep
//     sending full heartbeats.
//   - Fast path for an unchanged heartbeat (popshim's; RocketMQ's heartbeat
//     v2 skips an unchanged heartbeat by a client-sent fingerprint, which
//     popshim does not offer). A client repeats the same body every 30 s on
//     each connection, so each connection remembers its last accepted
//     heartbeat (heartbeatCache: a copy of the body if at most
//     maxCachedHeartbeatBytes, 8 KiB, the request's language and version,
//     and the registration planned from it). A heartbeat whose body,
//     language and version are byte-identical to that one skips the JSON
//     decode, the bounds and the planning (functions of those bytes and of
//     the fixed configuration, so they would give the same result) and goes
//     to ClientTable.RefreshHeartbeat, which applies only while the
//     clientID is still registered over this connection in every group of
//     the heartbeat; it then leaves the table as RegisterHeartbeat would
//     (every group's LastUpdateMillis set to now, consumer settings and
//     subscriptions the heartbeat's; --max-conn-client-channels cannot
//     refuse a heartbeat that adds no membership). Otherwise (after
//     UNREGISTER_CLIENT, expiry, the clientID moving to another connection)
//     the full path runs, and so it does when a cached consumer group no
//     longer exists and may not be auto-created. Both paths log the skipped
//     entries, ensure the group configuration and retry topic, and send the
//     same reply. The
//     entry is replaced by each accepted heartbeat, dropped by a refused or
//     oversized one and when the connection closes (OnConnClose).
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) when the body is not a
// heartbeat or names no clientID; INVALID_PARAMETER (29), the code RocketMQ
// gives a request whose parameters fail a check, when the body exceeds
// 1 MiB or the heartbeat exceeds one of the bounds above (the remark names
// the flag and both numbers). A client only logs a non-SUCCESS heartbeat
// reply and keeps working.

import (
	"fmt"

	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// maxHeartbeatBodyBytes bounds the HEART_BEAT body decoded on the event loop
// (1 MiB; a client with a hundred subscriptions sends a few tens of KiB).
// A larger heartbeat is INVALID_PARAMETER (29) and registers nothing.
const maxHeartbeatBodyBytes = 1 << 20

func (b *Broker) handleHeartBeat(c remoting.Conn, req *codec.Command) {
	connID := c.ID()
	if last := b.hbCache.Match(connID, req); last != nil && b.groupsKnown(&last.Reg) && b.Clients.RefreshHeartbeat(&last.Reg) {
		b.logSkipped(last.Reg.Channel.ClientID, last.Skipped)
		b.heartbeatAccepted(c, req, &last.Reg)
		return
	}
	if len(req.Body) > maxHeartbeatBodyBytes {
		b.hbCache.Forget(connID)
		reply.Code(c, req, codec.InvalidParameter, fmt.Sprintf("heartbeat body of %d bytes exceeds %d", len(req.Body), maxHeartbeatBodyBytes))
		return
	}
	hb, err := codec.DecodeHeartbeatData(req.Body)
	if err == nil && hb.ClientID == "" {
		err = &codec.FieldError{Field: "clientID", Err: codec.ErrMissingField}
	}
	if err != nil {
		b.hbCache.Forget(connID)
		reply.Code(c, req, codec.SystemError, "heartbeat: "+err.Error())
		return
	}
	if remark := b.HBLimits.Exceeded(&hb); remark != "" {
		b.hbCache.Forget(connID)
		b.Log.Warn().Str("clientId", clients.ClipLog(hb.ClientID)).Str("remark", remark).Msg("heartbeat refused")
		reply.Code(c, req, codec.InvalidParameter, remark)
		return
	}
	ch := clients.ClientChannel{ClientID: hb.ClientID, ConnID: connID, Language: req.Language, Version: req.Version}
	if a := c.RemoteAddr(); a != nil {
		ch.RemoteAddr = a.String()
	}
	reg, skipped := clients.PlanHeartbeat(&hb, ch)
	b.logSkipped(hb.ClientID, skipped)
	unknown := b.dropUnknownGroups(&reg)
	if err := b.Clients.RegisterHeartbeat(reg, b.HBLimits.ConnChannels); err != nil {
		b.hbCache.Forget(connID)
		b.Log.Warn().Err(err).Str("clientId", clients.ClipLog(hb.ClientID)).Str("remote", ch.RemoteAddr).Msg("heartbeat refused")
		reply.Code(c, req, codec.InvalidParameter, "heartbeat: "+err.Error())
		return
	}
	if unknown {
		// Not cached: once an admin creates the group, the same body must
		// take the full path and register it.
		b.hbCache.Forget(connID)
	} else {
		b.hbCache.Remember(connID, req, reg, skipped)
	}
	b.heartbeatAccepted(c, req, &reg)
}

// logSkipped writes the one warn line of a heartbeat some of whose entries
// planHeartbeat skipped; nothing when none was.
func (b *Broker) logSkipped(clientID string, skipped clients.SkippedEntries) {
	if skipped.Count > 0 {
		b.Log.Warn().Str("clientId", clients.ClipLog(clientID)).Int("skipped", skipped.Count).Str("first", skipped.First).
			Msg("heartbeat: entries with invalid names skipped")
	}
}

// groupsKnown reports whether every consumer group of a cached
// registration still exists (or may be auto-created, which Find does);
// false sends the heartbeat down the full path, which drops the missing
// groups.
func (b *Broker) groupsKnown(reg *clients.Heartbeat) bool {
	for i := range reg.Consumers {
		if _, ok := b.Groups.Find(reg.Consumers[i].Group); !ok {
			return false
		}
	}
	return true
}

// dropUnknownGroups removes from reg the consumer groups that do not exist
// and may not be auto-created (--auto-create-subscription-group off), as a
// Java broker's heartBeat skips a consumer whose findSubscriptionGroupConfig
// is null: not registered, no retry topic, the reply still SUCCESS. Groups
// that may be auto-created are created (Find). Reports whether any was
// dropped.
func (b *Broker) dropUnknownGroups(reg *clients.Heartbeat) bool {
	kept := reg.Consumers[:0]
	for _, cr := range reg.Consumers {
		if _, ok := b.Groups.Find(cr.Group); ok {
			kept = append(kept, cr)
			continue
		}
		b.Log.Debug().Str("clientId", clients.ClipLog(reg.Channel.ClientID)).Str("consumerGroup", cr.Group).
			Msg("heartbeat: subscription group not exist, consumer not registered")
	}
	dropped := len(kept) < len(reg.Consumers)
	reg.Consumers = kept
	return dropped
}

// heartbeatAccepted finishes a heartbeat whose registration reg the
// ClientTable took (full or fast path): each consumer group's retry topic
// is ensured with the group's retryQueueNums queues, then SUCCESS with the
// heartbeat response header is sent.
func (b *Broker) heartbeatAccepted(c remoting.Conn, req *codec.Command, reg *clients.Heartbeat) {
	for i := range reg.Consumers {
		group := reg.Consumers[i].Group
		if _, err := b.Topics.EnsureRetryTopic(group, b.retryQueueNums(group)); err != nil {
			b.Log.Warn().Err(err).Str("consumerGroup", group).Msg("heartbeat: retry topic not created")
		}
	}
	resp := codec.NewResponse(req, codec.Success, "")
	codec.HeartbeatResponseHeader{}.Encode(resp)
	reply.Respond(c, req, resp)
}

// retryQueueNums is the queue count %RETRY%<group> is created with: the
// group's retryQueueNums (SubscriptionGroupConfig.java), or
// meta.RetryQueueNums for a group not (yet) in the table. Event loop.
func (b *Broker) retryQueueNums(group string) int32 {
	if g, ok := b.Groups.Get(group); ok {
		return g.RetryQueueNums
	}
	return meta.RetryQueueNums
}
