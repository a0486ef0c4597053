package codec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// QueueData is one broker's queue counts for a topic (route/QueueData.java).
type QueueData struct {
	BrokerName     string `json:"brokerName"`
	Perm           int32  `json:"perm"` // Perm* bits; 6 = read+write
	ReadQueueNums  int32  `json:"readQueueNums"`
	TopicSysFlag   int32  `json:"topicSysFlag"`
	WriteQueueNums int32  `json:"writeQueueNums"`
}

// BrokerData is one broker group (route/BrokerData.java). BrokerAddrs maps
// broker id to "ip:port"; id 0 is the master, and both clients only publish
// to and pop from a broker with an id-0 address.
type BrokerData struct {
	BrokerAddrs        map[int64]string
	BrokerName         string
	Cluster            string
	EnableActingMaster bool
	ZoneName           string // omitted when empty
}

// TopicRouteData is the GET_ROUTEINFO_BY_TOPIC (105) SUCCESS body
// (route/TopicRouteData.java).
type TopicRouteData struct {
	BrokerDatas    []BrokerData
	OrderTopicConf string // "brokerName:queueNum;..."; omitted when empty
	QueueDatas     []QueueData
}

func appendBrokerAddrs(dst []byte, addrs map[int64]string, legacyKeys bool) []byte {
	ids := make([]int64, 0, len(addrs))
	for id := range addrs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	dst = append(dst, '{')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		if legacyKeys {
			dst = strconv.AppendInt(dst, id, 10)
		} else {
			dst = append(dst, '"')
			dst = strconv.AppendInt(dst, id, 10)
			dst = append(dst, '"')
		}
		dst = append(dst, ':')
		dst = appendJSONString(dst, addrs[id])
	}
	return append(dst, '}')
}

// AppendBrokerData appends one BrokerData object (members sorted, compact).
// legacyKeys writes brokerAddrs keys as bare numbers, as fastjson does by
// default; otherwise they are quoted.
func AppendBrokerData(dst []byte, b *BrokerData, legacyKeys bool) []byte {
	dst = append(dst, `{"brokerAddrs":`...)
	dst = appendBrokerAddrs(dst, b.BrokerAddrs, legacyKeys)
	dst = append(dst, `,"brokerName":`...)
	dst = appendJSONString(dst, b.BrokerName)
	dst = append(dst, `,"cluster":`...)
	dst = appendJSONString(dst, b.Cluster)
	dst = append(dst, `,"enableActingMaster":`...)
	dst = strconv.AppendBool(dst, b.EnableActingMaster)
	if b.ZoneName != "" {
		dst = append(dst, `,"zoneName":`...)
		dst = appendJSONString(dst, b.ZoneName)
	}
	return append(dst, '}')
}

// AppendTopicRouteData appends the route body as compact JSON with members
// in fastjson's sorted order and brokerAddrs always present (the Go client
// panics without it and breaks on whitespace). legacyKeys selects bare
// numeric brokerAddrs keys, what a Java name server sends to requests with
// version < 401 (example E8); quoted keys (legacyKeys false) are accepted by
// every client and are the recommended form.
func AppendTopicRouteData(dst []byte, r *TopicRouteData, legacyKeys bool) []byte {
	dst = append(dst, `{"brokerDatas":[`...)
	for i := range r.BrokerDatas {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendBrokerData(dst, &r.BrokerDatas[i], legacyKeys)
	}
	dst = append(dst, `],"filterServerTable":{}`...)
	if r.OrderTopicConf != "" {
		dst = append(dst, `,"orderTopicConf":`...)
		dst = appendJSONString(dst, r.OrderTopicConf)
	}
	dst = append(dst, `,"queueDatas":[`...)
	for i := range r.QueueDatas {
		q := &r.QueueDatas[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"brokerName":`...)
		dst = appendJSONString(dst, q.BrokerName)
		dst = append(dst, `,"perm":`...)
		dst = strconv.AppendInt(dst, int64(q.Perm), 10)
		dst = append(dst, `,"readQueueNums":`...)
		dst = strconv.AppendInt(dst, int64(q.ReadQueueNums), 10)
		dst = append(dst, `,"topicSysFlag":`...)
		dst = strconv.AppendInt(dst, int64(q.TopicSysFlag), 10)
		dst = append(dst, `,"writeQueueNums":`...)
		dst = strconv.AppendInt(dst, int64(q.WriteQueueNums), 10)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// quoteBareKeys rewrites object keys written as bare integers ({0:"a"})
// into quoted ones ({"0":"a"}) so encoding/json can read fastjson's legacy
// output. Strings are skipped intact.
func quoteBareKeys(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		out = append(out, c)
		switch c {
		case '"':
			inStr = true
		case '{', ',':
			j := i + 1
			for j < len(b) && isJSONSpace(b[j]) {
				j++
			}
			k := j
			if k < len(b) && b[k] == '-' {
				k++
			}
			for k < len(b) && b[k] >= '0' && b[k] <= '9' {
				k++
			}
			m := k
			for m < len(b) && isJSONSpace(b[m]) {
				m++
			}
			if k > j && m < len(b) && b[m] == ':' {
				out = append(out, b[i+1:j]...)
				out = append(out, '"')
				out = append(out, b[j:k]...)
				out = append(out, '"')
				i = k - 1
			}
		}
	}
	return out
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

type brokerDataJSON struct {
	BrokerAddrs        map[string]string `json:"brokerAddrs"`
	BrokerName         string            `json:"brokerName"`
	Cluster            string            `json:"cluster"`
	EnableActingMaster bool              `json:"enableActingMaster"`
	ZoneName           string            `json:"zoneName"`
}

func (j *brokerDataJSON) toBrokerData() (BrokerData, error) {
	b := BrokerData{BrokerName: j.BrokerName, Cluster: j.Cluster, EnableActingMaster: j.EnableActingMaster, ZoneName: j.ZoneName,
		BrokerAddrs: make(map[int64]string, len(j.BrokerAddrs))}
	for k, v := range j.BrokerAddrs {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return BrokerData{}, fmt.Errorf("%w: brokerAddrs key %q of %q", ErrInvalidField, k, j.BrokerName)
		}
		b.BrokerAddrs[id] = v
	}
	return b, nil
}

// DecodeTopicRouteData parses a route body in either key form (quoted or
// legacy bare numbers). Errors wrap ErrInvalidField.
func DecodeTopicRouteData(b []byte) (TopicRouteData, error) {
	var raw struct {
		BrokerDatas    []brokerDataJSON `json:"brokerDatas"`
		OrderTopicConf string           `json:"orderTopicConf"`
		QueueDatas     []QueueData      `json:"queueDatas"`
	}
	if err := json.Unmarshal(quoteBareKeys(b), &raw); err != nil {
		return TopicRouteData{}, fmt.Errorf("%w: topic route: %v", ErrInvalidField, err)
	}
	r := TopicRouteData{OrderTopicConf: raw.OrderTopicConf, QueueDatas: raw.QueueDatas}
	for i := range raw.BrokerDatas {
		bd, err := raw.BrokerDatas[i].toBrokerData()
		if err != nil {
			return TopicRouteData{}, err
		}
		r.BrokerDatas = append(r.BrokerDatas, bd)
	}
	return r, nil
}

// ClusterInfo is the GET_BROKER_CLUSTER_INFO (106) body (body/ClusterInfo.java).
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData // brokerName → BrokerData
	ClusterAddrTable map[string][]string   // cluster → broker names
}

// AppendClusterInfo appends the body as compact JSON, map keys sorted;
// legacyKeys as in AppendBrokerData (a Java name server uses legacy keys here).
func AppendClusterInfo(dst []byte, c *ClusterInfo, legacyKeys bool) []byte {
	dst = append(dst, `{"brokerAddrTable":{`...)
	for i, name := range slices.Sorted(maps.Keys(c.BrokerAddrTable)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		bd := c.BrokerAddrTable[name]
		dst = appendJSONString(dst, name)
		dst = append(dst, ':')
		dst = AppendBrokerData(dst, &bd, legacyKeys)
	}
	dst = append(dst, `},"clusterAddrTable":{`...)
	for i, cl := range slices.Sorted(maps.Keys(c.ClusterAddrTable)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, cl)
		dst = append(dst, ":["...)
		for j, n := range c.ClusterAddrTable[cl] {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, n)
		}
		dst = append(dst, ']')
	}
	return append(dst, "}}"...)
}

// DecodeClusterInfo parses a cluster-info body in either key form.
func DecodeClusterInfo(b []byte) (ClusterInfo, error) {
	var raw struct {
		BrokerAddrTable  map[string]brokerDataJSON `json:"brokerAddrTable"`
		ClusterAddrTable map[string][]string       `json:"clusterAddrTable"`
	}
	if err := json.Unmarshal(quoteBareKeys(b), &raw); err != nil {
		return ClusterInfo{}, fmt.Errorf("%w: cluster info: %v", ErrInvalidField, err)
	}
	c := ClusterInfo{BrokerAddrTable: map[string]BrokerData{}, ClusterAddrTable: raw.ClusterAddrTable}
	for k, v := range raw.BrokerAddrTable {
		bd, err := v.toBrokerData()
		if err != nil {
			return ClusterInfo{}, err
		}
		c.BrokerAddrTable[k] = bd
	}
	return c, nil
}
