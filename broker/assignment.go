package broker

// Assignment: QUERY_ASSIGNMENT (400) of remoting, QueryAssignment of gRPC;
// broker/.../processor/QueryAssignmentProcessor.java, with popshim's
// deliberate differences from the Java client's AllocateMessageQueueAveragely
// and AllocateMessageQueueAveragelyByCircle.
//
// Request (AssignmentRequest; body/QueryAssignmentRequestBody.java): topic,
// consumerGroup, clientId (all required), strategyName, messageModel.
//
// Behaviour:
//   - The queue set is every queue of every readable broker of the topic's
//     route (Route: the name servers' route with --namesrv-addr, falling
//     back to this broker's own queues; this broker alone otherwise):
//     queues 0..readQueueNums-1 of each, sorted by (topic, brokerName,
//     queueId) (TopicRoute.ReadableQueues). A route cache miss is answered
//     from the fetch's goroutine (at most 3 s later), never on the
//     caller's.
//   - %RETRY% topics get an empty assignment: a POP consumer needs no PULL
//     loop on %RETRY%<group> (retries come back through POP), and an empty
//     list keeps the client's 20 s rebalance cadence. A Java broker
//     answers PULL here.
//   - The mode comes from SetMessageRequestMode for (topic, group), and
//     defaults to POP with popShareQueueNum -1 (a Java broker defaults to
//     PULL), so every Java push consumer with clientRebalance=false pops
//     without an admin step.
//   - BROADCASTING: every queue of the set.
//   - CLUSTERING: the strategy must be AVG or AVG_BY_CIRCLE, else no list
//     ("keep the current assignment"), as Java. POP with popShareQueueNum ≤ 0
//     or ≥ (consumers − 1): every queue rewritten to queueId -1, i.e. one
//     assignment {topic, brokerName, -1} per broker of the route (pop every
//     queue of each broker). Otherwise the client's share by the strategy
//     plus the shares of the next popShareQueueNum consumers in the sorted
//     clientId list, with real queue ids; with more consumers than queues,
//     the one queue at (index mod queues). PULL: the strategy's share.
//     Consumers are the group's live members (Heartbeat).
//   - An unknown topic answers without a list (KeepCurrent, "keep the
//     current assignment"), as Java does. The requesting client counts as
//     a member even before its first heartbeat arrived (Java answers no
//     list for a group it has no heartbeat of).
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) "query assignment: the
// custom field <f> is null" when topic, consumerGroup or clientId is
// missing.

import (
	"slices"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
)

// Allocation strategy names (client/.../rebalance/AllocateMessageQueue*.java).
const (
	StrategyAvg         = "AVG"
	StrategyAvgByCircle = "AVG_BY_CIRCLE"
)

// defaultPopShareQueueNum is the popShareQueueNum used when no mode was set
// (BrokerConfig.defaultPopShareQueueNum, -1: every consumer pops every queue).
const defaultPopShareQueueNum int32 = -1

// AssignmentRequest asks which queues of Topic client ClientID of
// ConsumerGroup should consume.
type AssignmentRequest struct {
	Topic         string
	ConsumerGroup string
	ClientID      string
	// StrategyName is StrategyAvg or StrategyAvgByCircle for CLUSTERING;
	// any other answers KeepCurrent.
	StrategyName string
	// MessageModel is codec.MessageModelCluster or
	// codec.MessageModelBroadcst.
	MessageModel string
}

// AssignmentResult is the client's share of the topic's queues.
type AssignmentResult struct {
	// KeepCurrent: no assignment is given (unknown topic, unsupported
	// strategy); the client keeps what it has. Queues is nil.
	KeepCurrent bool
	// Mode is codec.MessageRequestModePop or ...Pull, for every queue;
	// "" for the empty assignment of a %RETRY% topic.
	Mode string
	// Queues are the assigned queues in allocation order, without
	// repeats; QueueID -1 means every queue of that broker (POP). Empty,
	// not nil, unless KeepCurrent.
	Queues []codec.MessageQueue
}

// Assignment computes r's assignment as described above; done gets it, or
// an *Error (SYSTEM_ERROR) for a missing field. done runs on the caller's
// goroutine, or on the RouteSource's fetch goroutine after a route cache
// miss. Any goroutine; never blocks.
func (b *Broker) Assignment(r AssignmentRequest, done func(AssignmentResult, error)) {
	field := ""
	switch {
	case r.Topic == "":
		field = "topic"
	case r.ConsumerGroup == "":
		field = "consumerGroup"
	case r.ClientID == "":
		field = "clientId"
	}
	if field != "" {
		done(AssignmentResult{}, &Error{Code: codec.SystemError,
			Remark: "query assignment: " + (&codec.FieldError{Field: field, Err: codec.ErrMissingField}).Error()})
		return
	}
	if codec.IsRetryTopic(r.Topic) {
		done(AssignmentResult{Queues: []codec.MessageQueue{}}, nil)
		return
	}
	b.withRoute(r.Topic, func(rt TopicRoute, ok bool) {
		if !ok {
			done(AssignmentResult{KeepCurrent: true}, nil)
			return
		}
		done(b.assign(&r, rt.ReadableQueues()), nil)
	})
}

// assign allocates r's share of the queue set mqAll. Any goroutine: it
// reads the topic table's request modes and the client table.
func (b *Broker) assign(r *AssignmentRequest, mqAll []codec.MessageQueue) AssignmentResult {
	mode := meta.RequestMode{Topic: r.Topic, ConsumerGroup: r.ConsumerGroup, Mode: codec.MessageRequestModePop, PopShareQueueNum: defaultPopShareQueueNum}
	if m, ok := b.Topics.RequestMode(r.Topic, r.ConsumerGroup); ok {
		mode = m
	}
	share := func(queues []codec.MessageQueue) AssignmentResult {
		return AssignmentResult{Mode: mode.Mode, Queues: distinctQueues(queues)}
	}
	if r.MessageModel == codec.MessageModelBroadcst {
		return share(mqAll)
	}
	if len(mqAll) == 0 {
		return AssignmentResult{Queues: []codec.MessageQueue{}}
	}
	var allocate func(queues, consumers, index int) []int
	switch r.StrategyName {
	case StrategyAvg:
		allocate = AllocateAvg
	case StrategyAvgByCircle:
		allocate = AllocateAvgByCircle
	default:
		return AssignmentResult{KeepCurrent: true}
	}
	cids := b.Clients.ConsumerIDs(r.ConsumerGroup)
	if !slices.Contains(cids, r.ClientID) {
		cids = append(cids, r.ClientID)
		slices.Sort(cids)
	}
	index := slices.Index(cids, r.ClientID)
	pick := func(ids []int) []codec.MessageQueue {
		out := make([]codec.MessageQueue, 0, len(ids))
		for _, id := range ids {
			out = append(out, mqAll[id])
		}
		return out
	}
	if mode.Mode != codec.MessageRequestModePop {
		return share(pick(allocate(len(mqAll), len(cids), index)))
	}
	n := int(mode.PopShareQueueNum)
	if n <= 0 || n >= len(cids)-1 {
		all := make([]codec.MessageQueue, len(mqAll))
		for i, mq := range mqAll {
			all[i] = codec.MessageQueue{Topic: mq.Topic, BrokerName: mq.BrokerName, QueueID: -1}
		}
		return share(all)
	}
	if len(cids) > len(mqAll) {
		return share([]codec.MessageQueue{mqAll[index%len(mqAll)]})
	}
	ids := allocate(len(mqAll), len(cids), index)
	for i := 1; i <= n; i++ {
		ids = append(ids, allocate(len(mqAll), len(cids), (index+i)%len(cids))...)
	}
	return share(pick(ids))
}

// distinctQueues drops repeats from queues (the Java processor collects
// them into a Set), keeping first-seen order. Never nil.
func distinctQueues(queues []codec.MessageQueue) []codec.MessageQueue {
	out := make([]codec.MessageQueue, 0, len(queues))
	seen := make(map[codec.MessageQueue]bool, len(queues))
	for _, mq := range queues {
		if seen[mq] {
			continue
		}
		seen[mq] = true
		out = append(out, mq)
	}
	return out
}

// AllocateAvg is AllocateMessageQueueAveragely: consumer index of
// consumers gets a contiguous block of the queue indexes 0..queues-1, the
// first (queues mod consumers) consumers one queue more. nil for an index
// outside 0..consumers-1. Pure.
func AllocateAvg(queues, consumers, index int) []int {
	if queues == 0 || consumers == 0 || index < 0 || index >= consumers {
		return nil
	}
	mod := queues % consumers
	size := queues / consumers
	switch {
	case queues <= consumers:
		size = 1
	case mod > 0 && index < mod:
		size++
	}
	start := index*size + mod
	if mod > 0 && index < mod {
		start = index * size
	}
	n := min(size, queues-start)
	out := make([]int, 0, max(n, 0))
	for i := 0; i < n; i++ {
		out = append(out, (start+i)%queues)
	}
	return out
}

// AllocateAvgByCircle is AllocateMessageQueueAveragelyByCircle: queue
// index i goes to consumer i mod consumers. Pure.
func AllocateAvgByCircle(queues, consumers, index int) []int {
	var out []int
	for i := index; i < queues && consumers > 0; i += consumers {
		out = append(out, i)
	}
	return out
}
