package auth

import (
	"strings"

	"github.com/popshim/popshim/codec"
)

// need is one thing a request asks for: actions on a literal resource
// (DefaultAuthorizationContext).
type need struct {
	res  Resource
	acts Action
}

// field names one extField that names a resource, as a @RocketMQResource
// field of a request header does; sep splits a list.
type field struct {
	name string
	typ  string
	sep  string
}

// annotated is a request header's @RocketMQAction: the actions, the
// resource fields, and cluster set when the class-level resource is
// Cluster (used when no field names a resource).
type annotated struct {
	acts    Action
	fields  []field
	cluster bool
}

var (
	fGroup    = field{name: "consumerGroup", typ: ResGroup}
	fTopic    = field{name: "topic", typ: ResTopic}
	subGT     = annotated{acts: ActSub, fields: []field{fGroup, fTopic}}
	getTopic  = annotated{acts: ActGet, fields: []field{fTopic}}
	clusterUp = annotated{acts: ActUpdate, cluster: true}
	clusterGt = annotated{acts: ActGet, cluster: true}
)

// annotations maps the request codes popshim serves whose header class in
// remoting/.../protocol/header carries @RocketMQAction to that annotation.
// Codes in neither this table nor needsOf's switch ask for nothing beyond
// authentication, as on a Java broker (e.g. BATCH_ACK_MESSAGE,
// GET_ALL_TOPIC_CONFIG, GET_BROKER_CLUSTER_INFO).
var annotations = map[int32]annotated{
	codec.RequestPopMessage:                 subGT,
	codec.RequestAckMessage:                 subGT,
	codec.RequestChangeMessageInvisibleTime: subGT,
	codec.RequestNotification:               subGT,
	codec.RequestEndTransaction:             {acts: ActPub, fields: []field{fTopic}},
	codec.RequestGetMaxOffset:               getTopic,
	codec.RequestGetMinOffset:               getTopic,
	codec.RequestGetEarliestMsgStoreTime:    getTopic,
	codec.RequestSearchOffsetByTimestamp:    getTopic,
	codec.RequestViewMessageByID:            getTopic,
	codec.RequestGetTopicConfig:             getTopic,
	codec.RequestGetTopicStatsInfo:          getTopic,
	codec.RequestQueryTopicConsumeByWho:     getTopic,
	codec.RequestUpdateAndCreateTopic:       {acts: ActCreate, fields: []field{fTopic}},
	codec.RequestDeleteTopicInBroker:        {acts: ActDelete, fields: []field{fTopic}},
	codec.RequestDeleteSubscriptionGroup:    {acts: ActDelete, fields: []field{{name: "groupName", typ: ResGroup}}},
	codec.RequestGetSubscriptionGroupConfig: {acts: ActGet, fields: []field{{name: "group", typ: ResGroup}}},
	codec.RequestInvokeBrokerToResetOffset:  {acts: ActUpdate, fields: []field{{name: "group", typ: ResGroup}, fTopic}},
	codec.RequestGetConsumeStats: {acts: ActGet, fields: []field{fGroup, fTopic,
		{name: "topicList", typ: ResTopic, sep: ";"}}},
	codec.RequestGetConsumerConnectionList: {acts: ActGet, fields: []field{fGroup}},
	codec.RequestGetConsumerRunningInfo:    {acts: ActGet, fields: []field{fGroup}},
	codec.RequestConsumeMessageDirectly:    subGT,
	codec.RequestGetProducerConnectionList: clusterGt,
	codec.RequestGetAllProducerInfo:        clusterGt,
	requestGetKVConfig:                     clusterGt,
	requestDeleteKVConfig:                  clusterUp,
	codec.RequestPutKVConfig:               clusterUp,
	codec.RequestDeleteTopicInNamesrv:      {acts: ActUpdate, cluster: true, fields: []field{{name: "clusterName", typ: ResCluster}}},
	RequestCreateUser:                      clusterUp,
	RequestUpdateUser:                      clusterUp,
	RequestDeleteUser:                      clusterUp,
	RequestGetUser:                         clusterGt,
	RequestListUser:                        clusterGt,
	RequestCreateACL:                       clusterUp,
	RequestUpdateACL:                       clusterUp,
	RequestDeleteACL:                       clusterUp,
	RequestGetACL:                          clusterGt,
	RequestListACL:                         clusterGt,
}

func isRetry(topic string) bool { return strings.HasPrefix(topic, codec.RetryGroupTopicPrefix) }

// ofGroup is Resource.ofGroup: a retry or DLQ topic name stands for its
// group.
func ofGroup(name string) Resource {
	if isRetry(name) {
		name = strings.TrimPrefix(name, codec.RetryGroupTopicPrefix)
	} else if strings.HasPrefix(name, "%DLQ%") {
		name = strings.TrimPrefix(name, "%DLQ%")
	}
	return Resource{Type: ResGroup, Name: name, Pattern: PatLiteral}
}

func ofTopic(name string) Resource { return Resource{Type: ResTopic, Name: name, Pattern: PatLiteral} }

// needsOf appends to dst what req asks for, as
// DefaultAuthorizationContextBuilder.build(ChannelHandlerContext,
// RemotingCommand) derives it. A HEART_BEAT body that does not parse is an
// *Error ("parse authorization context error.").
func needsOf(dst []need, req *codec.Command, cluster string) ([]need, error) {
	switch req.Code {
	case codec.RequestAckMessage, codec.RequestPopMessage, codec.RequestChangeMessageInvisibleTime, codec.RequestNotification:
		// The annotated rule of subGT, without the table walk: these are
		// most of the traffic. ACK and CHANGE headers may be in the typed
		// slots (codec.Command.Ext), not in ExtFields.
		g, hasG := req.Ext("consumerGroup")
		t, hasT := req.Ext("topic")
		if hasG {
			dst = append(dst, need{Resource{Type: ResGroup, Name: g, Pattern: PatLiteral}, ActSub})
		}
		if hasT {
			if isRetry(t) {
				dst = append(dst, need{ofGroup(t), ActSub})
			} else {
				dst = append(dst, need{ofTopic(t), ActSub})
			}
		}
		return dst, nil
	case codec.RequestLockBatchMQ, codec.RequestUnlockBatchMQ:
		return lockBatchNeeds(dst, req.Body)
	case codec.RequestSendMessageV2, codec.RequestSendBatchMessage:
		// Single-letter SEND headers may be in the typed slots too.
		t, hasT := req.Ext("b")
		g, hasG := req.Ext("a")
		if !hasT && !hasG {
			return dst, nil
		}
		return sendNeeds(dst, t, g), nil
	}
	f := req.ExtFields
	if len(f) == 0 {
		return dst, nil
	}
	switch req.Code {
	case codec.RequestGetRouteInfoByTopic:
		if t := f["topic"]; isRetry(t) {
			return append(dst, need{ofGroup(t), ActSub | ActGet}), nil
		}
		return append(dst, need{ofTopic(f["topic"]), ActPub | ActSub | ActGet}), nil
	case codec.RequestSendMessage:
		return sendNeeds(dst, f["topic"], f["group"]), nil
	case codec.RequestConsumerSendMsgBack:
		return append(dst, need{ofGroup(f["group"]), ActSub}), nil
	case codec.RequestPullMessage:
		if t := f["topic"]; !isRetry(t) {
			dst = append(dst, need{ofTopic(t), ActSub})
		}
		return append(dst, need{ofGroup(f["consumerGroup"]), ActSub}), nil
	case codec.RequestHeartBeat:
		hb, err := codec.DecodeHeartbeatData(req.Body)
		if err != nil {
			return dst, denied("parse authorization context error.")
		}
		for _, c := range hb.ConsumerDataSet {
			dst = append(dst, need{ofGroup(c.GroupName), ActSub})
			for _, s := range c.SubscriptionDataSet {
				if !isRetry(s.Topic) {
					dst = append(dst, need{ofTopic(s.Topic), ActSub})
				}
			}
		}
		return dst, nil
	case codec.RequestUnregisterClient:
		if g := f["consumerGroup"]; strings.TrimSpace(g) != "" {
			dst = append(dst, need{ofGroup(g), ActSub})
		}
		return dst, nil
	case codec.RequestGetConsumerListByGroup:
		return append(dst, need{ofGroup(f["consumerGroup"]), ActSub | ActGet}), nil
	case codec.RequestQueryConsumerOffset, codec.RequestUpdateConsumerOffset:
		act := ActGet
		if req.Code == codec.RequestUpdateConsumerOffset {
			act = ActUpdate
		}
		if t := f["topic"]; !isRetry(t) {
			dst = append(dst, need{ofTopic(t), ActSub | act})
		}
		return append(dst, need{ofGroup(f["consumerGroup"]), ActSub | act}), nil
	}
	a, ok := annotations[req.Code]
	if !ok {
		return dst, nil
	}
	n := len(dst)
	for _, fd := range a.fields {
		v, ok := f[fd.name]
		if !ok {
			continue
		}
		vals := []string{v}
		if fd.sep != "" {
			vals = strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(fd.sep, r) })
		}
		for _, x := range vals {
			if fd.typ == ResTopic && isRetry(x) {
				dst = append(dst, need{ofGroup(x), a.acts})
			} else {
				dst = append(dst, need{Resource{Type: fd.typ, Name: x, Pattern: PatLiteral}, a.acts})
			}
		}
	}
	if len(dst) == n && a.cluster {
		dst = append(dst, need{Resource{Type: ResCluster, Name: cluster, Pattern: PatLiteral}, a.acts})
	}
	return dst, nil
}

// sendNeeds is the SEND_MESSAGE rule: a retry topic asks Sub on the group
// (the producer group field, else the topic's group), any other topic Pub.
func sendNeeds(dst []need, topic, group string) []need {
	if isRetry(topic) {
		if strings.TrimSpace(group) != "" {
			return append(dst, need{ofGroup(group), ActSub})
		}
		return append(dst, need{ofGroup(topic), ActSub})
	}
	return append(dst, need{ofTopic(topic), ActPub})
}

// lockBatchNeeds is the LOCK_BATCH_MQ / UNLOCK_BATCH_MQ rule: Sub on the
// body's consumer group and on each queue's topic but retry topics. A body
// that does not parse is an *Error ("parse authorization context error.").
func lockBatchNeeds(dst []need, body []byte) ([]need, error) {
	b, err := codec.DecodeLockBatchRequestBody(body)
	if err != nil {
		return dst, denied("parse authorization context error.")
	}
	dst = append(dst, need{ofGroup(b.ConsumerGroup), ActSub})
	for _, mq := range b.MQSet {
		if !isRetry(mq.Topic) {
			dst = append(dst, need{ofTopic(mq.Topic), ActSub})
		}
	}
	return dst, nil
}
