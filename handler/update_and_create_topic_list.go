package handler

// UPDATE_AND_CREATE_TOPIC_LIST (18): the remoting adapter of
// broker.Broker.CreateTopics, where the behaviour and the response codes
// are listed (AdminBrokerProcessor.updateAndCreateTopicList).
//
// Header: none. Body: {"topicConfigList":[TopicConfig...]}
// (body/CreateTopicListRequestBody.java); attribute keys carry the "+"/"-"
// operator prefix ({"+k":"v","-k":""}), turned into
// UPDATE_AND_CREATE_TOPIC's change string ("+k=v,-k"). An unparsable body
// → SYSTEM_ERROR (1).
//
// Reply: the bare code and remark, once every topic is durable (and
// registered with --namesrv-addr, as UPDATE_AND_CREATE_TOPIC).

import (
	"sort"
	"strings"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
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
	rs := make([]broker.CreateTopicRequest, 0, len(body.TopicConfigList))
	for _, tc := range body.TopicConfigList {
		rs = append(rs, broker.CreateTopicRequest{
			Topic: tc.TopicName, ReadQueueNums: tc.ReadQueueNums, WriteQueueNums: tc.WriteQueueNums, Perm: tc.Perm,
			TopicFilterType: tc.TopicFilterType, TopicSysFlag: tc.TopicSysFlag, Order: tc.Order,
			Attributes: attributeChange(tc.Attributes),
		})
	}
	b.CreateTopics(rs, func(err error) { replyOutcome(c, req, err) })
}
