package broker

// Heartbeat: HEART_BEAT (34) of remoting, Heartbeat of gRPC;
// broker/.../processor/ClientManageProcessor.java heartBeat.
//
// Request (HeartbeatRequest): the clientID, the client's language and
// version, the consumer groups (consumeType, messageModel,
// consumeFromWhere, subscriptions) and producer groups it announces, the
// connection it came on and the peer's address.
//
// Behaviour:
//   - Bounds first (RocketMQ has none; a Java client sends one heartbeat
//     listing its few groups): more than --max-heartbeat-groups consumer
//     groups or producer groups, or more than --max-heartbeat-subscriptions
//     subscriptions in one consumer group, refuses the whole heartbeat
//     before anything is registered; so does a heartbeat that would leave
//     its connection with more than --max-conn-client-channels group
//     memberships (memberships it only refreshes do not count as added). A
//     refused heartbeat neither registers, refreshes nor removes anything
//     and creates no topic.
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
//     ConsumerList and Assignment read it.
//   - Each consumer group is looked up in the group table (meta.GroupTable
//     Find, findSubscriptionGroupConfig): an unknown group is created with
//     SubscriptionGroupConfig's defaults when --auto-create-subscription-group
//     is on (or its name starts with CID_RMQ_SYS_); otherwise its entry is
//     skipped silently, as a Java broker does: not registered, no retry
//     topic, the answer still SUCCESS (HeartbeatResult.Dropped tells the
//     adapter not to remember the heartbeat, so the group registers once an
//     admin creates it).
//   - Each registered consumer group's retry topic %RETRY%<group> is created
//     with the group's retryQueueNums queues (default 1), perm 6, so its
//     route exists (the Java push consumer subscribes it; docs/SCENARIOS.md
//     RET-06); an existing retry topic is left as it is. Group and topic
//     writes go to the writer's background lane; the answer does not wait
//     for them, and a full lane only logs (the next heartbeat, every 30 s,
//     tries again). Nothing else is created: subscribed topics are
//     recorded, never made, as in RocketMQ.
//   - Each producer group is registered for the client.
//   - The members of each consumer group whose membership or subscribed
//     topics changed get NOTIFY_CONSUMER_IDS_CHANGED (consumer_ids.go).
//   - RefreshHeartbeat serves a protocol's fast path for an unchanged
//     repeat of a heartbeat accepted before on the same connection.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) "heartbeat: the custom
// field <clientID> is null" when the heartbeat names no clientID;
// INVALID_PARAMETER (29), the code RocketMQ gives a request whose
// parameters fail a check, when the heartbeat exceeds one of the bounds
// above (the remark names the flag and both numbers). A client only logs a
// non-SUCCESS heartbeat reply and keeps working.

import (
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
)

// HeartbeatRequest is one client heartbeat (heartbeat/HeartbeatData.java)
// with what the adapter knows of its connection.
type HeartbeatRequest struct {
	// ClientID is the client instance, "ip@instanceName[@unitName]";
	// required.
	ClientID string
	// Language is the client's language code name (remoting header
	// "language": JAVA, GO, CPP, ...; LanguageCode.java).
	Language string
	// Version is the client's version ordinal (remoting header "version",
	// MQVersion.Version; 479 = V5_3_3).
	Version int32
	// Consumers are the consumer groups as sent (ConsumerData.java), invalid
	// names included: the bounds count them. Heartbeat takes ownership of
	// the slice and of each Subscriptions slice (filtered in place).
	Consumers []clients.ConsumerRegistration
	// Producers are the producer group names as sent (ProducerData.java);
	// owned by Heartbeat as Consumers.
	Producers []string
	// ConnID is the adapter's connection (or stream) id: ConnClosed(ConnID)
	// removes every registration the heartbeat made.
	ConnID uint64
	// RemoteAddr is the peer's "ip:port" as admin tools show it ("" when
	// unknown).
	RemoteAddr string
	// Protocol is the client's protocol as the metrics' protocol_type
	// label: "grpc" for the gRPC endpoint's clients, "" for remoting.
	Protocol string
}

// HeartbeatResult is what an accepted heartbeat registered.
type HeartbeatResult struct {
	// Registered is the registration the ClientTable took: the client
	// channel, the valid consumer groups that exist (or were auto-created)
	// and the valid producer groups. A fast path may keep it for
	// RefreshHeartbeat.
	Registered clients.Heartbeat
	// Skipped counts the entries dropped for invalid names (logged once).
	Skipped clients.SkippedEntries
	// Dropped is true when consumer groups were left out because they do
	// not exist and may not be auto-created: a fast path must not remember
	// this heartbeat, so that the same heartbeat registers them once an
	// admin creates the groups.
	Dropped bool
}

// Heartbeat registers a client's groups as listed above; done gets what
// was registered, or an *Error (SYSTEM_ERROR, INVALID_PARAMETER). It never
// waits on storage: done runs on the caller's goroutine before Heartbeat
// returns. Any goroutine.
func (b *Broker) Heartbeat(r HeartbeatRequest, done func(HeartbeatResult, error)) {
	if r.ClientID == "" {
		done(HeartbeatResult{}, &Error{Code: codec.SystemError,
			Remark: "heartbeat: " + (&codec.FieldError{Field: "clientID", Err: codec.ErrMissingField}).Error()})
		return
	}
	if remark := b.HBLimits.Exceeded(r.Consumers, r.Producers); remark != "" {
		b.Log.Warn().Str("clientId", clients.ClipLog(r.ClientID)).Str("remark", remark).Msg("heartbeat refused")
		done(HeartbeatResult{}, &Error{Code: codec.InvalidParameter, Remark: remark})
		return
	}
	ch := clients.ClientChannel{ClientID: r.ClientID, ConnID: r.ConnID, Language: r.Language, Version: r.Version, RemoteAddr: r.RemoteAddr, Protocol: r.Protocol}
	reg, skipped := clients.PlanHeartbeat(ch, r.Consumers, r.Producers)
	b.logSkipped(r.ClientID, skipped)
	dropped := b.dropUnknownGroups(&reg)
	changed, err := b.Clients.RegisterHeartbeat(reg, b.HBLimits.ConnChannels)
	if err != nil {
		b.Log.Warn().Err(err).Str("clientId", clients.ClipLog(r.ClientID)).Str("remote", r.RemoteAddr).Msg("heartbeat refused")
		done(HeartbeatResult{}, &Error{Code: codec.InvalidParameter, Remark: "heartbeat: " + err.Error()})
		return
	}
	b.ensureRetryTopics(&reg)
	b.consumerIDsChanged(changed, true)
	done(HeartbeatResult{Registered: reg, Skipped: skipped, Dropped: dropped}, nil)
}

// RefreshHeartbeat is the core's side of a fast path for an unchanged
// heartbeat: reg and skipped are a HeartbeatResult that Heartbeat returned
// for the same connection (reg's subscriptions normalized to distinct
// topics, as clients.HeartbeatCache keeps them). When every consumer
// group of reg still exists (or may be auto-created) and
// clients.ClientTable.RefreshHeartbeat still finds the clientID registered
// over that connection in every group, the table is left as Heartbeat
// would leave it, the skipped entries are logged, the retry topics are
// ensured and it returns true: the adapter answers SUCCESS. false: nothing
// was registered (expired channels may have been swept) and the adapter
// must run Heartbeat. Any goroutine; memory only.
func (b *Broker) RefreshHeartbeat(reg *clients.Heartbeat, skipped clients.SkippedEntries) bool {
	if !b.groupsKnown(reg) || !b.Clients.RefreshHeartbeat(reg) {
		return false
	}
	b.logSkipped(reg.Channel.ClientID, skipped)
	b.ensureRetryTopics(reg)
	return true
}

// logSkipped writes the one warn line of a heartbeat some of whose entries
// PlanHeartbeat skipped; nothing when none was.
func (b *Broker) logSkipped(clientID string, skipped clients.SkippedEntries) {
	if skipped.Count > 0 {
		b.Log.Warn().Str("clientId", clients.ClipLog(clientID)).Int("skipped", skipped.Count).Str("first", skipped.First).
			Msg("heartbeat: entries with invalid names skipped")
	}
}

// groupsKnown reports whether every consumer group of a remembered
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
// is null: not registered, no retry topic, the answer still SUCCESS. Groups
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

// ensureRetryTopics makes each consumer group's retry topic exist with the
// group's retryQueueNums queues (fire and forget on the background lane;
// a refusal is logged and the next heartbeat tries again).
func (b *Broker) ensureRetryTopics(reg *clients.Heartbeat) {
	for i := range reg.Consumers {
		group := reg.Consumers[i].Group
		if _, err := b.Topics.EnsureRetryTopic(group, b.RetryQueueNums(group)); err != nil {
			b.Log.Warn().Err(err).Str("consumerGroup", group).Msg("heartbeat: retry topic not created")
		}
	}
}
