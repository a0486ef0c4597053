package codec

// UniqueKeyQueryFlag is the extra ext field a client adds to QUERY_MESSAGE
// (12) when it looks a message up by its UNIQ_KEY (MixAll.UNIQUE_MSG_QUERY_FLAG,
// "_UNIQUE_KEY_QUERY", value "true"); the broker then uses its
// defaultQueryMaxNum (32) instead of the header's maxNum.
const UniqueKeyQueryFlag = "_UNIQUE_KEY_QUERY"

// Index types of a 5.5 QUERY_MESSAGE (QueryMessageRequestHeader.indexType,
// MessageConst's index types): keys (also for unique keys), tags, unique key.
const (
	IndexTypeKeys   = "K"
	IndexTypeTags   = "T"
	IndexTypeUnique = "U"
)

// QueryMessageRequestHeader is the header of QUERY_MESSAGE (12)
// (QueryMessageRequestHeader.java): topic, key, maxNum, beginTimestamp and
// endTimestamp (Unix ms, both inclusive) are all required; indexType (5.5:
// IndexTypeKeys when absent, IndexTypeTags to look up by tag) and lastKey
// (5.5 paging of the RocksDB index, "hour@topic@type@key@msgId@offset" of
// the last row seen) are optional. UniqueKey is the UniqueKeyQueryFlag ext
// field ("true").
type QueryMessageRequestHeader struct {
	Topic          string
	Key            string
	MaxNum         int32
	BeginTimestamp int64
	EndTimestamp   int64
	IndexType      string
	LastKey        string
	UniqueKey      bool
}

// DecodeQueryMessageRequestHeader decodes the header; errors are
// *FieldError.
func DecodeQueryMessageRequestHeader(ext map[string]string) (QueryMessageRequestHeader, error) {
	r := extReader{ext: ext}
	h := QueryMessageRequestHeader{
		Topic: r.str("topic"), Key: r.str("key"), MaxNum: r.i32("maxNum"),
		BeginTimestamp: r.i64("beginTimestamp"), EndTimestamp: r.i64("endTimestamp"),
		IndexType: r.optStr("indexType"), LastKey: r.optStr("lastKey"),
		UniqueKey: ext[UniqueKeyQueryFlag] == "true",
	}
	return h, r.Err()
}

// Encode sets the ext fields on c (the flag only when UniqueKey).
func (h QueryMessageRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("topic", h.Topic)
	w.str("key", h.Key)
	w.i32("maxNum", h.MaxNum)
	w.i64("beginTimestamp", h.BeginTimestamp)
	w.i64("endTimestamp", h.EndTimestamp)
	w.optStr("indexType", h.IndexType)
	w.optStr("lastKey", h.LastKey)
	if h.UniqueKey {
		w.str(UniqueKeyQueryFlag, "true")
	}
}

// QueryMessageResponseHeader is the header of a QUERY_MESSAGE answer
// (QueryMessageResponseHeader.java): the store timestamp (Unix ms) and the
// physical offset of the newest index entry. Both are always sent.
type QueryMessageResponseHeader struct {
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyoffset int64
}

// DecodeQueryMessageResponseHeader decodes the header; errors are
// *FieldError.
func DecodeQueryMessageResponseHeader(ext map[string]string) (QueryMessageResponseHeader, error) {
	r := extReader{ext: ext}
	h := QueryMessageResponseHeader{
		IndexLastUpdateTimestamp: r.i64("indexLastUpdateTimestamp"),
		IndexLastUpdatePhyoffset: r.i64("indexLastUpdatePhyoffset"),
	}
	return h, r.Err()
}

// Encode sets the ext fields on c.
func (h QueryMessageResponseHeader) Encode(c *Command) {
	w := extWriter{c}
	w.i64("indexLastUpdateTimestamp", h.IndexLastUpdateTimestamp)
	w.i64("indexLastUpdatePhyoffset", h.IndexLastUpdatePhyoffset)
}

// ViewBrokerStatsDataRequestHeader is the header of VIEW_BROKER_STATS_DATA
// (315) (ViewBrokerStatsDataRequestHeader.java): statsName (a
// BrokerStatsManager name such as TOPIC_PUT_NUMS) and statsKey (a topic,
// "topic@group", …), both required.
type ViewBrokerStatsDataRequestHeader struct {
	StatsName string
	StatsKey  string
}

// DecodeViewBrokerStatsDataRequestHeader decodes the header; errors are
// *FieldError.
func DecodeViewBrokerStatsDataRequestHeader(ext map[string]string) (ViewBrokerStatsDataRequestHeader, error) {
	r := extReader{ext: ext}
	h := ViewBrokerStatsDataRequestHeader{StatsName: r.str("statsName"), StatsKey: r.str("statsKey")}
	return h, r.Err()
}

// Encode sets statsName and statsKey on c.
func (h ViewBrokerStatsDataRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("statsName", h.StatsName)
	w.str("statsKey", h.StatsKey)
}
