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

// clone returns a deep copy, so callers never share the Attributes map with
// the store's in-memory table.
func (m TopicMeta) clone() TopicMeta {
	m.Attributes = cloneMap(m.Attributes)
	return m
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
