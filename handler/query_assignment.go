package handler

// QUERY_ASSIGNMENT (400).
//
// Header: none. Body: JSON QueryAssignmentRequestBody {topic, consumerGroup,
// clientId, strategyName, messageModel}.
//
// Behaviour (broker/.../processor/QueryAssignmentProcessor.java, with the
// shim's deliberate differences from client-behaviour §2.1–2.2):
//   - %RETRY% topics get an empty assignment list ("messageQueueAssignments":
//     []): a POP consumer needs no PULL loop on %RETRY%<group> (retries come
//     back through POP), and an empty list keeps the client's 20 s rebalance
//     cadence. A Java broker answers PULL here.
//   - The mode comes from SET_MESSAGE_REQUEST_MODE for (topic, group), and
//     defaults to POP with popShareQueueNum -1 (a Java broker defaults to
//     PULL), so every Java push consumer with clientRebalance=false pops
//     without an admin step.
//   - POP with popShareQueueNum ≤ 0 or ≥ (consumers − 1): one assignment
//     {topic, brokerName, queueId -1} (pop from every queue). Otherwise the
//     client's AVG share plus the shares of the next popShareQueueNum
//     consumers in the sorted clientId list, with real queue ids; with more
//     consumers than queues, one queue each (index mod queues).
//   - PULL: the strategy's share of the readable queues (AVG or
//     AVG_BY_CIRCLE; another strategy answers no list, "keep current").
//   - BROADCASTING: every readable queue.
//   - An unknown topic answers SUCCESS without a list (null, "keep the
//     current assignment"), as Java does. The requesting client counts as a
//     member even before its first heartbeat arrived.
//
// Response codes: SUCCESS (0) with QueryAssignmentResponseBody; SYSTEM_ERROR
// (1) when the body is not valid JSON or names no topic, group or clientId.

import (
	"slices"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/meta"
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
	out := codec.QueryAssignmentResponseBody{MessageQueueAssignments: b.assign(body)}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeQueryAssignmentResponseBody(&out)
	reply.Respond(c, req, resp)
}

// assign computes the assignment list; nil means "keep current".
func (b *Broker) assign(q codec.QueryAssignmentRequestBody) []codec.MessageQueueAssignment {
	if codec.IsRetryTopic(q.Topic) {
		return []codec.MessageQueueAssignment{}
	}
	tm, ok := b.Topics.Get(q.Topic)
	if !ok {
		return nil
	}
	mode := meta.RequestMode{Topic: q.Topic, ConsumerGroup: q.ConsumerGroup, Mode: codec.MessageRequestModePop, PopShareQueueNum: defaultPopShareQueueNum}
	if m, ok := b.Topics.RequestMode(q.Topic, q.ConsumerGroup); ok {
		mode = m
	}
	queues := int(tm.ReadQueueNums)
	if tm.Perm&codec.PermRead == 0 {
		queues = 0
	}
	wrap := func(ids []int) []codec.MessageQueueAssignment {
		out := make([]codec.MessageQueueAssignment, 0, len(ids))
		seen := map[int]bool{}
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, codec.MessageQueueAssignment{Mode: mode.Mode,
				MessageQueue: codec.MessageQueue{BrokerName: b.Cfg.BrokerName, QueueID: int32(id), Topic: q.Topic}})
		}
		return out
	}
	all := make([]int, queues)
	for i := range all {
		all[i] = i
	}
	if q.MessageModel == codec.MessageModelBroadcst {
		return wrap(all)
	}
	if queues == 0 {
		return []codec.MessageQueueAssignment{}
	}
	cids := b.Clients.ConsumerIDs(q.ConsumerGroup)
	if !slices.Contains(cids, q.ClientID) {
		cids = append(cids, q.ClientID)
		slices.Sort(cids)
	}
	index := slices.Index(cids, q.ClientID)
	if mode.Mode == codec.MessageRequestModePop {
		n := int(mode.PopShareQueueNum)
		if n <= 0 || n >= len(cids)-1 {
			return wrap([]int{-1})
		}
		if len(cids) > queues {
			return wrap([]int{index % queues})
		}
		ids := allocateAvg(queues, len(cids), index)
		for i := 1; i <= n; i++ {
			ids = append(ids, allocateAvg(queues, len(cids), (index+i)%len(cids))...)
		}
		return wrap(ids)
	}
	switch q.StrategyName {
	case strategyAvg:
		return wrap(allocateAvg(queues, len(cids), index))
	case strategyAvgByCircle:
		return wrap(allocateAvgByCircle(queues, len(cids), index))
	}
	return nil
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
