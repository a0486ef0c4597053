package handler

// QUERY_ASSIGNMENT (400).
//
// Header: none. Body: JSON QueryAssignmentRequestBody {topic, consumerGroup,
// clientId, strategyName, messageModel}.
//
// Behaviour (broker/.../processor/QueryAssignmentProcessor.java, with the
// shim's deliberate differences from client/.../consumer/RebalanceImpl.java):
//   - The queue set is every queue of every readable QueueData of the
//     topic's route, across all brokers (TopicRouteInfoManager's subscribe
//     info): queues 0..readQueueNums-1 of each, sorted by (topic,
//     brokerName, queueId). With --namesrv-addr the route is the one the
//     Apache name servers hold (namesrv.RouteCache: fetched on first use,
//     refreshed every 5 s); a cache miss is answered from the fetch's
//     goroutine when it completes (at most 3 s), never on the event loop.
//     When the name servers know no route or cannot be reached, this
//     broker's own queues are used (a Java broker answers no list on
//     TOPIC_NOT_EXIST; popshim's fallback keeps a consumer that reached it
//     popping while the name servers catch up). With the embedded name
//     server the route is this broker alone, as GET_ROUTEINFO_BY_TOPIC
//     answers it.
//   - %RETRY% topics get an empty assignment list ("messageQueueAssignments":
//     []): a POP consumer needs no PULL loop on %RETRY%<group> (retries come
//     back through POP), and an empty list keeps the client's 20 s rebalance
//     cadence. A Java broker answers PULL here.
//   - The mode comes from SET_MESSAGE_REQUEST_MODE for (topic, group), and
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
//   - An unknown topic answers SUCCESS without a list (null, "keep the
//     current assignment"), as Java does. The requesting client counts as a
//     member even before its first heartbeat arrived (Java answers no list
//     for a group it has no heartbeat of).
//
// Response codes: SUCCESS (0) with QueryAssignmentResponseBody; SYSTEM_ERROR
// (1) when the body is not valid JSON or names no topic, group or clientId.

import (
	"cmp"
	"slices"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/namesrv"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// Allocation strategy names (client/.../rebalance/AllocateMessageQueue*.java).
const (
	strategyAvg         = "AVG"
	strategyAvgByCircle = "AVG_BY_CIRCLE"
)

// defaultPopShareQueueNum is the popShareQueueNum used when no mode was set
// (BrokerConfig.defaultPopShareQueueNum, -1: every consumer pops every queue).
const defaultPopShareQueueNum int32 = -1

func (b *Broker) handleQueryAssignment(c remoting.Conn, req *codec.Command) {
	body, err := codec.DecodeQueryAssignmentRequestBody(req.Body)
	if err == nil {
		switch {
		case body.Topic == "":
			err = &codec.FieldError{Field: "topic", Err: codec.ErrMissingField}
		case body.ConsumerGroup == "":
			err = &codec.FieldError{Field: "consumerGroup", Err: codec.ErrMissingField}
		case body.ClientID == "":
			err = &codec.FieldError{Field: "clientId", Err: codec.ErrMissingField}
		}
	}
	if err != nil {
		reply.Code(c, req, codec.SystemError, "query assignment: "+err.Error())
		return
	}
	if codec.IsRetryTopic(body.Topic) {
		b.replyAssignment(c, req, []codec.MessageQueueAssignment{})
		return
	}
	if b.routes == nil {
		b.replyAssignment(c, req, b.assign(body, b.localQueues(body.Topic)))
		return
	}
	res, ok := b.routes.Lookup(body.Topic, func(res namesrv.RouteResult) {
		// A fetch goroutine: the cache missed and the fetch completed.
		b.replyAssignment(c, req, b.assign(body, b.clusterQueues(body.Topic, res)))
	})
	if ok {
		b.replyAssignment(c, req, b.assign(body, b.clusterQueues(body.Topic, res)))
	}
}

// replyAssignment answers SUCCESS with list (nil: no list). Any goroutine.
func (b *Broker) replyAssignment(c remoting.Conn, req *codec.Command, list []codec.MessageQueueAssignment) {
	out := codec.QueryAssignmentResponseBody{MessageQueueAssignments: list}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeQueryAssignmentResponseBody(&out)
	reply.Respond(c, req, resp)
}

// localQueues is the queue set of topic on this broker alone; nil when the
// topic is unknown here.
func (b *Broker) localQueues(topic string) []codec.MessageQueue {
	m, ok := b.Topics.Get(topic)
	if !ok {
		return nil
	}
	route := b.self.RouteOf(m)
	return routeQueues(topic, &route)
}

// clusterQueues is the queue set of topic from a name-server route
// fetch, falling back to this broker's own queues when there is no route.
func (b *Broker) clusterQueues(topic string, res namesrv.RouteResult) []codec.MessageQueue {
	if res.Found {
		return routeQueues(topic, &res.Route)
	}
	return b.localQueues(topic)
}

// routeQueues lists queues 0..readQueueNums-1 of every readable QueueData
// of route, sorted by (topic, brokerName, queueId)
// (TopicRouteInfoManager.topicRouteData2TopicSubscribeInfo). Never nil.
// Pure.
func routeQueues(topic string, route *codec.TopicRouteData) []codec.MessageQueue {
	out := []codec.MessageQueue{}
	for _, qd := range route.QueueDatas {
		if qd.Perm&codec.PermRead == 0 {
			continue
		}
		for i := int32(0); i < qd.ReadQueueNums; i++ {
			out = append(out, codec.MessageQueue{Topic: topic, BrokerName: qd.BrokerName, QueueID: i})
		}
	}
	slices.SortFunc(out, compareQueues)
	return slices.CompactFunc(out, func(a, b codec.MessageQueue) bool { return compareQueues(a, b) == 0 })
}

// compareQueues orders message queues as MessageQueue.compareTo: topic,
// then brokerName, then queueId.
func compareQueues(a, b codec.MessageQueue) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.BrokerName, b.BrokerName), cmp.Compare(a.QueueID, b.QueueID))
}

// assign computes the assignment list over the queue set mqAll (nil: the
// topic has no route); nil means "keep current". Any goroutine: it reads
// the topic table's request modes and the client table.
func (b *Broker) assign(q codec.QueryAssignmentRequestBody, mqAll []codec.MessageQueue) []codec.MessageQueueAssignment {
	if mqAll == nil {
		return nil
	}
	mode := meta.RequestMode{Topic: q.Topic, ConsumerGroup: q.ConsumerGroup, Mode: codec.MessageRequestModePop, PopShareQueueNum: defaultPopShareQueueNum}
	if m, ok := b.Topics.RequestMode(q.Topic, q.ConsumerGroup); ok {
		mode = m
	}
	if q.MessageModel == codec.MessageModelBroadcst {
		return wrapQueues(mode.Mode, mqAll)
	}
	if len(mqAll) == 0 {
		return []codec.MessageQueueAssignment{}
	}
	var allocate func(queues, consumers, index int) []int
	switch q.StrategyName {
	case strategyAvg:
		allocate = allocateAvg
	case strategyAvgByCircle:
		allocate = allocateAvgByCircle
	default:
		return nil
	}
	cids := b.Clients.ConsumerIDs(q.ConsumerGroup)
	if !slices.Contains(cids, q.ClientID) {
		cids = append(cids, q.ClientID)
		slices.Sort(cids)
	}
	index := slices.Index(cids, q.ClientID)
	pick := func(ids []int) []codec.MessageQueue {
		out := make([]codec.MessageQueue, 0, len(ids))
		for _, id := range ids {
			out = append(out, mqAll[id])
		}
		return out
	}
	if mode.Mode != codec.MessageRequestModePop {
		return wrapQueues(mode.Mode, pick(allocate(len(mqAll), len(cids), index)))
	}
	n := int(mode.PopShareQueueNum)
	if n <= 0 || n >= len(cids)-1 {
		all := make([]codec.MessageQueue, len(mqAll))
		for i, mq := range mqAll {
			all[i] = codec.MessageQueue{Topic: mq.Topic, BrokerName: mq.BrokerName, QueueID: -1}
		}
		return wrapQueues(mode.Mode, all)
	}
	if len(cids) > len(mqAll) {
		return wrapQueues(mode.Mode, []codec.MessageQueue{mqAll[index%len(mqAll)]})
	}
	ids := allocate(len(mqAll), len(cids), index)
	for i := 1; i <= n; i++ {
		ids = append(ids, allocate(len(mqAll), len(cids), (index+i)%len(cids))...)
	}
	return wrapQueues(mode.Mode, pick(ids))
}

// wrapQueues turns queues into assignments of mode, dropping repeats (the
// Java processor collects them into a Set) and keeping first-seen order.
func wrapQueues(mode string, queues []codec.MessageQueue) []codec.MessageQueueAssignment {
	out := make([]codec.MessageQueueAssignment, 0, len(queues))
	seen := make(map[codec.MessageQueue]bool, len(queues))
	for _, mq := range queues {
		if seen[mq] {
			continue
		}
		seen[mq] = true
		out = append(out, codec.MessageQueueAssignment{Mode: mode, MessageQueue: mq})
	}
	return out
}

// allocateAvg is AllocateMessageQueueAveragely: consumer index of consumers
// gets a contiguous block of the queues 0..queues-1, the first
// (queues mod consumers) consumers one queue more.
func allocateAvg(queues, consumers, index int) []int {
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

// allocateAvgByCircle is AllocateMessageQueueAveragelyByCircle: queue i goes
// to consumer i mod consumers.
func allocateAvgByCircle(queues, consumers, index int) []int {
	var out []int
	for i := index; i < queues && consumers > 0; i += consumers {
		out = append(out, i)
	}
	return out
}
