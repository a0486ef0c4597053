package broker

// Topic administration: CreateTopic (UPDATE_AND_CREATE_TOPIC 17),
// CreateTopics (UPDATE_AND_CREATE_TOPIC_LIST 18) and DeleteTopic
// (DELETE_TOPIC_IN_BROKER 215); broker/.../processor/AdminBrokerProcessor.java
// updateAndCreateTopic, updateAndCreateTopicList, deleteTopic.
//
// CreateTopic:
//   - The topic name is checked as TopicValidator does ([%|a-zA-Z0-9_-],
//     at most 127 characters, 255 for %RETRY%/%DLQ%); system topics (the
//     cluster-name and broker-name topics, and TopicValidator.isSystemTopic's
//     names: TBW102, SCHEDULE_TOPIC_XXXX, RMQ_SYS_TRACE_TOPIC, ..., rmq_sys_*)
//     cannot be created or changed: INVALID_PARAMETER (29) "The topic[...]
//     is conflict with system topic.".
//   - Queue counts must be 0..MaxTopicQueueNums (1024) with at least one of
//     them positive; perm must only use the bits 8|4|2|1.
//   - attributes are applied to the existing ones: "+k=v" sets, "-k"
//     removes. Known keys: message.type (NORMAL, FIFO, DELAY, TRANSACTION),
//     queue.type, cleanup.policy, reserve.time.
//   - The configuration is written through the writer (background lane);
//     the answer waits until it is fsynced, and the new route is visible
//     (Route, GET_ROUTEINFO_BY_TOPIC) from that moment (the proxy reads it
//     right after).
//   - With a topic registrar installed (SetTopicRegistrar; --namesrv-addr)
//     the answer also waits for the name servers to hold the new table, as
//     a Java broker registers with its name servers before it answers
//     (registerIncrementBrokerData): the 5.5 proxy asks the name servers for
//     the route right after this reply (interop FINDINGS F3). The registrar
//     bounds that wait (3 s); after it the answer is SUCCESS anyway (the
//     topic is durable). The caller never waits: done runs on the
//     registrar's or a timer goroutine.
//   - Response codes: SUCCESS (0); SYSTEM_ERROR (1) for an invalid topic
//     name (as Java) or a failed write ("write failed: <cause>");
//     INVALID_PARAMETER (29) for bad queue counts, perm or attributes, or a
//     system topic; SYSTEM_BUSY (2) when the lane is full.
//
// CreateTopics: every topic is checked first, as CreateTopic checks one;
// the first refusal answers for the whole list ("topic <t>: " before the
// remark of a queue-count, perm or attribute refusal) and nothing is
// written (updateAndCreateTopicList validates before it writes). Then each
// topic is written through the writer (background lane) and the answer
// waits until all are fsynced and registered as above. If a Submit is
// refused part way (busy lane, failed writer), the topics already
// submitted are still created and the answer carries the refusal. An
// empty list answers SUCCESS at once.
//
// DeleteTopic: removes the topic's configuration, messages, queue extents,
// consumer offsets and request modes, and with them the POP retry topics
// of every consumer group known to the broker (%RETRY%<group>_<topic> and
// %RETRY%<group>+<topic>; docs/SCENARIOS.md RET-05, RocketMQ PR #7209), all in
// one write through the writer (background lane). The answer waits until
// it is fsynced; the routes disappear at that moment. In-flight POP
// checkpoints for the topic are left to revive, which drops them when the
// message is gone. Names are checked and system topics refused as by
// CreateTopic. Deleting an unknown topic succeeds. Response codes: SUCCESS
// (0); INVALID_PARAMETER (29) for a system topic; SYSTEM_BUSY (2) when the
// lane is full; SYSTEM_ERROR (1) for an invalid name or a failed write.

import (
	"sync"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// CreateTopicRequest is one topic configuration to create or replace
// (header/CreateTopicRequestHeader.java, TopicConfig.java).
type CreateTopicRequest struct {
	Topic          string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32 // codec.Perm* bits
	// TopicFilterType is SINGLE_TAG or MULTI_TAG; "" reads as SINGLE_TAG.
	TopicFilterType string
	TopicSysFlag    int32
	Order           bool
	// Attributes is the change applied to the topic's current attributes:
	// "+key=value" items set, "-key" items remove, comma separated.
	Attributes string
}

// DeleteTopicRequest names the topic DeleteTopic removes.
type DeleteTopicRequest struct {
	Topic string
}

// CreateTopic validates r and writes the topic; done gets nil once it is
// durable (and registered, see SetTopicRegistrar), or an *Error with the
// codes above: on the caller's goroutine for a refusal, else on the
// writer's completer, the registrar's or a timer goroutine. Any goroutine;
// never blocks.
func (b *Broker) CreateTopic(r CreateTopicRequest, done func(error)) {
	m, e := b.adminTopicMeta(&r, "")
	if e != nil {
		done(e)
		return
	}
	err := b.Topics.Create(m, func(err error) {
		if err != nil {
			done(adminWriteErr(err))
			return
		}
		b.registered(func() { done(nil) })
	})
	if err != nil {
		done(SubmitError("", err))
	}
}

// CreateTopics validates every request of rs, then writes them; done as
// CreateTopic's, once for the whole list. rs must not be modified
// afterwards. Any goroutine; never blocks.
func (b *Broker) CreateTopics(rs []CreateTopicRequest, done func(error)) {
	metas := make([]popstore.TopicMeta, 0, len(rs))
	for i := range rs {
		m, e := b.adminTopicMeta(&rs[i], "topic "+rs[i].Topic+": ")
		if e != nil {
			done(e)
			return
		}
		metas = append(metas, m)
	}
	if len(metas) == 0 {
		done(nil)
		return
	}
	var (
		mu        sync.Mutex
		pending   = len(metas) // Create calls not yet settled
		writeErr  error        // first failed durable write
		submitErr error        // Submit refusal that stopped the loop
	)
	// settle runs once per topic: after its durable write, or for each
	// topic never submitted. The last one answers.
	settle := func(n int, err, refused error) {
		mu.Lock()
		if err != nil && writeErr == nil {
			writeErr = err
		}
		if refused != nil {
			submitErr = refused
		}
		pending -= n
		last := pending == 0
		wErr, sErr := writeErr, submitErr
		mu.Unlock()
		switch {
		case !last:
		case sErr != nil:
			done(SubmitError("", sErr))
		case wErr != nil:
			done(adminWriteErr(wErr))
		default:
			b.registered(func() { done(nil) })
		}
	}
	for i, m := range metas {
		if err := b.Topics.Create(m, func(err error) { settle(1, err, nil) }); err != nil {
			settle(len(metas)-i, nil, err)
			return
		}
	}
}

// DeleteTopic removes r.Topic and its POP retry topics; done gets nil once
// the deletion is durable, or an *Error with the codes above: on the
// caller's goroutine for a refusal, else on the writer's completer. Any
// goroutine; never blocks.
func (b *Broker) DeleteTopic(r DeleteTopicRequest, done func(error)) {
	if e := b.refuseAdminTopic(r.Topic); e != nil {
		done(e)
		return
	}
	err := b.Topics.Delete(r.Topic, b.Clients.ConsumerGroups(), func(_ []string, err error) { done(adminWriteErr(err)) })
	if err != nil {
		done(SubmitError("", err))
	}
}

// adminTopicMeta checks r as CreateTopic does and returns the
// configuration to write: the name (refuseAdminTopic), then queue counts
// and perm, then the attribute change against the current attributes.
// prefix starts the remark of a queue-count, perm or attribute refusal.
// Memory only.
func (b *Broker) adminTopicMeta(r *CreateTopicRequest, prefix string) (popstore.TopicMeta, *Error) {
	if e := b.refuseAdminTopic(r.Topic); e != nil {
		return popstore.TopicMeta{}, e
	}
	if remark := topicShapeError(r.ReadQueueNums, r.WriteQueueNums, r.Perm); remark != "" {
		return popstore.TopicMeta{}, &Error{Code: codec.InvalidParameter, Remark: prefix + remark}
	}
	var cur map[string]string
	if old, ok := b.Topics.Get(r.Topic); ok {
		cur = old.Attributes
	}
	attrs, err := applyTopicAttributes(cur, r.Attributes)
	if err != nil {
		return popstore.TopicMeta{}, &Error{Code: codec.InvalidParameter, Remark: prefix + err.Error()}
	}
	filter := r.TopicFilterType
	if filter == "" {
		filter = codec.TopicFilterSingleTag
	}
	return popstore.TopicMeta{
		TopicName: r.Topic, ReadQueueNums: r.ReadQueueNums, WriteQueueNums: r.WriteQueueNums,
		Perm: r.Perm, TopicFilterType: filter, TopicSysFlag: r.TopicSysFlag, Order: r.Order, Attributes: attrs,
	}, nil
}
