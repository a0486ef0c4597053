package handler

// UPDATE_AND_CREATE_TOPIC_LIST (18).
//
// Header: none. Body: {"topicConfigList":[TopicConfig...]}
// (body/CreateTopicListRequestBody.java); attribute keys carry the "+"/"-"
// operator prefix as in UPDATE_AND_CREATE_TOPIC.
//
// Behaviour: every topic is checked first, as UPDATE_AND_CREATE_TOPIC (17)
// checks one (name, system topic, queue counts, perm, attributes); the
// first refusal answers for the whole list and nothing is written
// (AdminBrokerProcessor.updateAndCreateTopicList validates before it
// writes). Then each topic is written through the writer (background lane)
// and the reply waits until all are fsynced and, with --namesrv-addr, for a
// REGISTER_BROKER carrying them (bounded by createRegisterTimeout). If a
// Submit is refused part way (busy lane, failed writer), the topics already
// submitted are still created and the reply carries the refusal.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) for an unparsable body, an
// invalid topic name or a failed write; INVALID_PARAMETER (29) for bad queue
// counts, perm, attributes or a system topic; SYSTEM_BUSY (2) when the lane
// is full.

import (
	"sort"
	"strings"
	"sync"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// attributeChange turns a prefixed attribute map ({"+k":"v","-k":""}) into
// UPDATE_AND_CREATE_TOPIC's change string ("+k=v,-k"), keys sorted.
func attributeChange(attrs map[string]string) string {
	items := make([]string, 0, len(attrs))
	for k, v := range attrs {
		if strings.HasPrefix(k, "+") {
			items = append(items, k+"="+v)
		} else {
			items = append(items, k)
		}
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

func (b *Broker) handleUpdateAndCreateTopicList(c remoting.Conn, req *codec.Command) {
	body, err := codec.DecodeCreateTopicListRequestBody(req.Body)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	metas := make([]popstore.TopicMeta, 0, len(body.TopicConfigList))
	for _, tc := range body.TopicConfigList {
		if b.refuseAdminTopic(c, req, tc.TopicName) {
			return
		}
		if remark := topicShapeError(tc.ReadQueueNums, tc.WriteQueueNums, tc.Perm); remark != "" {
			reply.Code(c, req, codec.InvalidParameter, "topic "+tc.TopicName+": "+remark)
			return
		}
		var cur map[string]string
		if old, ok := b.Topics.Get(tc.TopicName); ok {
			cur = old.Attributes
		}
		attrs, err := applyTopicAttributes(cur, attributeChange(tc.Attributes))
		if err != nil {
			reply.Code(c, req, codec.InvalidParameter, "topic "+tc.TopicName+": "+err.Error())
			return
		}
		filter := tc.TopicFilterType
		if filter == "" {
			filter = codec.TopicFilterSingleTag
		}
		metas = append(metas, popstore.TopicMeta{
			TopicName: tc.TopicName, ReadQueueNums: tc.ReadQueueNums, WriteQueueNums: tc.WriteQueueNums,
			Perm: tc.Perm, TopicFilterType: filter, TopicSysFlag: tc.TopicSysFlag, Order: tc.Order, Attributes: attrs,
		})
	}
	if len(metas) == 0 {
		reply.Code(c, req, codec.Success, "")
		return
	}
	var (
		mu        sync.Mutex
		pending   = len(metas) // Create calls not yet settled
		writeErr  error        // first failed durable write
		submitErr error        // Submit refusal that stopped the loop
	)
	// settle runs once per topic: after its durable write (done), or for
	// each topic never submitted. The last one answers.
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
			reply.SubmitError(c, req, sErr)
		case wErr != nil || b.registrar == nil:
			reply.Done(c, req, wErr)
		default:
			b.registrar.RegisterNow(createRegisterTimeout, func() { reply.Done(c, req, nil) })
		}
	}
	for i, m := range metas {
		if err := b.Topics.Create(m, func(err error) { settle(1, err, nil) }); err != nil {
			settle(len(metas)-i, nil, err)
			return
		}
	}
}
