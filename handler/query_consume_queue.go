package handler

// QUERY_CONSUME_QUEUE (321), mqadmin queryCq.
//
// Header: topic, queueId, index, count (required), consumerGroup
// (optional) (QueryConsumeQueueRequestHeader.java).
//
// Behaviour (AdminBrokerProcessor.queryConsumeQueue) over popshim's queue
// index, where a queue entry is the stored message itself: the body
// (QueryConsumeQueueResponseBody, fastjson field order) has maxQueueIndex
// and minQueueIndex of the queue and, for the entries index … index+count−1
// that exist, one ConsumeQueueData each: physicOffset (the record's commit-
// log offset), physicSize (the record's length) and tagsCode (the Java
// String.hashCode of its TAGS, 0 without tags), eval false. With
// consumerGroup, filterData is "<group>@<topic> is not online!" when no live
// member of the group subscribes the topic, else "null" (no ConsumerFilter
// data: popshim filters by tag only); subscriptionData is not included. An
// index outside [min, max) answers SUCCESS with the remark "Index <i> of
// <q>@<topic> is not exist!" and no queue data, as Java. count is capped at
// 1000 entries and 4 MiB of records. Built on the reader pool.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) "<q>@<topic> is not exist!"
// for an unknown topic or queue, for a store error, or with a remark naming
// a missing or invalid header field; SYSTEM_BUSY (2) when the reader queue
// is full.

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// Bounds of one QUERY_CONSUME_QUEUE answer.
const (
	queryCqMaxCount = 1000
	queryCqMaxBytes = 4 << 20
)

// consumeQueueData is body/ConsumeQueueData.java (fastjson: sorted, nulls
// left out).
type consumeQueueData struct {
	Eval         bool  `json:"eval"`
	PhysicOffset int64 `json:"physicOffset"`
	PhysicSize   int32 `json:"physicSize"`
	TagsCode     int64 `json:"tagsCode"`
}

// queryConsumeQueueBody is body/QueryConsumeQueueResponseBody.java.
type queryConsumeQueueBody struct {
	FilterData    string             `json:"filterData,omitempty"`
	MaxQueueIndex int64              `json:"maxQueueIndex"`
	MinQueueIndex int64              `json:"minQueueIndex"`
	QueueData     []consumeQueueData `json:"queueData,omitempty"`
}

// queryCqHeader decodes the header; the error names the field.
func queryCqHeader(ext map[string]string) (topic string, queueID int32, index int64, count int, err error) {
	num := func(field string, bits int) (int64, error) {
		v, ok := ext[field]
		if !ok || v == "" {
			return 0, &codec.FieldError{Field: field, Err: codec.ErrMissingField}
		}
		n, perr := strconv.ParseInt(v, 10, bits)
		if perr != nil {
			return 0, &codec.FieldError{Field: field, Value: v, Err: codec.ErrInvalidField}
		}
		return n, nil
	}
	if topic = ext["topic"]; topic == "" {
		return "", 0, 0, 0, &codec.FieldError{Field: "topic", Err: codec.ErrMissingField}
	}
	q, err := num("queueId", 32)
	if err != nil {
		return "", 0, 0, 0, err
	}
	if index, err = num("index", 64); err != nil {
		return "", 0, 0, 0, err
	}
	c, err := num("count", 32)
	if err != nil {
		return "", 0, 0, 0, err
	}
	return topic, int32(q), index, int(c), nil
}

func (b *Broker) handleQueryConsumeQueue(c remoting.Conn, req *codec.Command) {
	topic, q, index, count, err := queryCqHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	tc, ok := b.Topics.Get(topic)
	if !ok || q < 0 || q >= max(tc.ReadQueueNums, tc.WriteQueueNums) {
		reply.Code(c, req, codec.SystemError, fmt.Sprintf("%d@%s is not exist!", q, topic))
		return
	}
	body := queryConsumeQueueBody{MaxQueueIndex: max(b.Store.MaxOffset(topic, q), 0), MinQueueIndex: max(b.Store.MinOffset(topic, q), 0)}
	if g := req.ExtFields["consumerGroup"]; g != "" {
		body.FilterData = fmt.Sprintf("%s@%s is not online!", g, topic)
		if info, online := b.Clients.Consumer(g); online {
			if _, subscribed := info.Subscriptions[topic]; subscribed {
				body.FilterData = "null"
			}
		}
	}
	if index < body.MinQueueIndex || index >= body.MaxQueueIndex {
		resp := codec.NewResponse(req, codec.Success, fmt.Sprintf("Index %d of %d@%s is not exist!", index, q, topic))
		resp.Body, _ = json.Marshal(body)
		reply.Respond(c, req, resp)
		return
	}
	count = min(max(count, 0), queryCqMaxCount)
	job := func() {
		recs, _, err := b.Store.ReadMessages(topic, q, index, count, queryCqMaxBytes)
		if err != nil {
			reply.Code(c, req, codec.SystemError, "query consume queue: "+err.Error())
			return
		}
		for _, rec := range recs {
			m, _, err := codec.DecodeMessage(rec)
			if err != nil {
				reply.Code(c, req, codec.SystemError, "query consume queue: "+err.Error())
				return
			}
			d := consumeQueueData{PhysicOffset: m.PhysicalOffset, PhysicSize: int32(len(rec))}
			if tags, ok := m.Property(codec.PropertyTags); ok && tags != "" {
				d.TagsCode = int64(codec.TagHashCode(tags))
			}
			body.QueueData = append(body.QueueData, d)
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body, _ = json.Marshal(body)
		reply.Respond(c, req, resp)
	}
	if !b.submitLargeRead(c, req, job) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}
