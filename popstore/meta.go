package popstore

// TopicMeta is a topic's configuration, stored as JSON under "t/"+TopicName
// in the meta column family. Field names and JSON names follow RocketMQ's
// common/src/main/java/org/apache/rocketmq/common/TopicConfig.java, so the
// value can be returned as is in admin responses.
type TopicMeta struct {
	TopicName       string            `json:"topicName"`
	ReadQueueNums   int32             `json:"readQueueNums"`
	WriteQueueNums  int32             `json:"writeQueueNums"`
	Perm            int32             `json:"perm"` // PermName bits: 2 write, 4 read, 1 inherit
	TopicFilterType string            `json:"topicFilterType,omitempty"`
	TopicSysFlag    int32             `json:"topicSysFlag"`
	Order           bool              `json:"order"`
	Attributes      map[string]string `json:"attributes,omitempty"`
}

// GroupMeta is a consumer group's configuration, stored as JSON under
// "g/"+GroupName in the meta column family. Field names and JSON names follow
// RocketMQ's remoting/.../subscription/SubscriptionGroupConfig.java.
type GroupMeta struct {
	GroupName                      string            `json:"groupName"`
	ConsumeEnable                  bool              `json:"consumeEnable"`
	ConsumeFromMinEnable           bool              `json:"consumeFromMinEnable"`
	ConsumeBroadcastEnable         bool              `json:"consumeBroadcastEnable"`
	ConsumeMessageOrderly          bool              `json:"consumeMessageOrderly"`
	RetryQueueNums                 int32             `json:"retryQueueNums"`
	RetryMaxTimes                  int32             `json:"retryMaxTimes"`
	BrokerId                       int64             `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly   int64             `json:"whichBrokerWhenConsumeSlowly"`
	NotifyConsumerIdsChangedEnable bool              `json:"notifyConsumerIdsChangedEnable"`
	GroupSysFlag                   int32             `json:"groupSysFlag"`
	ConsumeTimeoutMinute           int32             `json:"consumeTimeoutMinute"`
	Attributes                     map[string]string `json:"attributes,omitempty"`
}

// clone returns a deep copy, so callers never share the Attributes map with
// the store's in-memory table.
func (m TopicMeta) clone() TopicMeta {
	m.Attributes = cloneMap(m.Attributes)
	return m
}

func (g GroupMeta) clone() GroupMeta {
	g.Attributes = cloneMap(g.Attributes)
	return g
}

func cloneMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
