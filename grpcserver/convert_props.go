package grpcserver

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/codec"
)

// propList collects the properties of one message SendInputOf converts, in
// the order they are set; encode turns them into the stored properties
// string. It replaces a map[string]string plus codec.EncodeProperties with
// the same result: one slice instead of a map per message, and the string
// built at its final size.
type propList []propPair

// propPair is one property name and value.
type propPair struct{ k, v string }

// set adds property k = v; a later set of the same k replaces it.
func (p *propList) set(k, v string) { *p = append(*p, propPair{k, v}) }

// encode returns the properties string of p exactly as
// codec.EncodeProperties returns it for a map holding p's final values:
// names in ascending byte order, pairs with an empty value left out.
// Errors wrap codec.ErrInvalidProperty: an empty name, or 0x01 or 0x02 in
// a name or value. p is sorted in place.
func (p propList) encode() (string, error) {
	slices.SortStableFunc(p, func(a, b propPair) int { return strings.Compare(a.k, b.k) })
	n := 0
	for i, e := range p {
		if e.k == "" || hasSeparator(e.k) || hasSeparator(e.v) {
			return "", fmt.Errorf("%w: %q=%q", codec.ErrInvalidProperty, e.k, e.v)
		}
		if p.kept(i) {
			n += len(e.k) + len(e.v) + 2
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i, e := range p {
		if p.kept(i) {
			b.WriteString(e.k)
			b.WriteByte(codec.PropertyNameValueSeparator)
			b.WriteString(e.v)
			b.WriteByte(codec.PropertySeparator)
		}
	}
	return b.String(), nil
}

// kept reports whether sorted pair i is stored: the last set of its name,
// with a value.
func (p propList) kept(i int) bool {
	return p[i].v != "" && (i+1 == len(p) || p[i+1].k != p[i].k)
}

// storedProps are the stored properties of a record as a v5 Message shows
// them: the ones read into system properties (and the receipt), each the
// value of its last pair, and the user properties, every other property
// that is neither reserved (IsReservedProperty) nor shown as a system
// property. It replaces a codec.DecodeProperties map that was then read
// and pruned: one pass over the string, and no map at all for a record
// without user properties.
type storedProps struct {
	tags, keys, bornHost, shardingKey, traceContext        string
	dlqTopic, dlqMessageID                                 string
	transaction, delayLevel, timerDeliverMS, timerDelaySec string
	uniqKey, popCK                                         string
	user                                                   map[string]string // nil when there are none
}

// storedPropsOf reads the properties string s. When s is not valid UTF-8
// every name and value goes through validUTF8 (protobuf refuses invalid
// strings); otherwise they alias s.
func storedPropsOf(s string) storedProps {
	var p storedProps
	valid := utf8.ValidString(s)
	for k, v := range codec.Properties(s) {
		if !valid {
			k, v = validUTF8(k), validUTF8(v)
		}
		switch k {
		case codec.PropertyTags:
			p.tags = v
		case codec.PropertyKeys:
			p.keys = v
		case codec.PropertyBornHost:
			p.bornHost = v
		case codec.PropertyShardingKey:
			p.shardingKey = v
		case codec.PropertyTraceContext:
			p.traceContext = v
		case codec.PropertyDLQOriginTopic:
			p.dlqTopic = v
		case codec.PropertyDLQOriginMessageID:
			p.dlqMessageID = v
		case codec.PropertyTransactionPrepared:
			p.transaction = v
		case codec.PropertyDelayTimeLevel:
			p.delayLevel = v
		case codec.PropertyTimerDeliverMS:
			p.timerDeliverMS = v
		case codec.PropertyTimerDelaySec:
			p.timerDelaySec = v
		case codec.PropertyUniqClientMessageIDKeyIdx:
			p.uniqKey = v
		case codec.PropertyPopCK:
			p.popCK = v
		default:
			if IsReservedProperty(k) || shownAsSystemProperty[k] {
				continue
			}
			if p.user == nil {
				p.user = make(map[string]string)
			}
			p.user[k] = v
		}
	}
	return p
}

// messageType is GrpcConverter's message_type rule.
func (p *storedProps) messageType() v2.MessageType {
	switch {
	case p.transaction == "true":
		return v2.MessageType_TRANSACTION
	case p.delayLevel != "", p.timerDeliverMS != "", p.timerDelaySec != "":
		return v2.MessageType_DELAY
	case p.shardingKey != "":
		return v2.MessageType_FIFO
	}
	return v2.MessageType_NORMAL
}

// deliveryTime returns the delivery time in milliseconds: now +
// TIMER_DELAY_SEC, else TIMER_DELIVER_MS. Unparsable values count as absent.
func (p *storedProps) deliveryTime(now time.Time) (int64, bool) {
	if p.timerDelaySec != "" {
		if sec, err := strconv.ParseInt(p.timerDelaySec, 10, 64); err == nil {
			return now.UnixMilli() + sec*1000, true
		}
	}
	if p.timerDeliverMS != "" {
		if ms, err := strconv.ParseInt(p.timerDeliverMS, 10, 64); err == nil {
			return ms, true
		}
	}
	return 0, false
}
