package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Tolerant decoding of SubscriptionGroupConfig and its 201 wrapper, as
// forgiving as fastjson2 (what a 5.5 broker parses a 200 body with):
// members are matched by exact name, unknown members are ignored, a
// missing or null member keeps its Java default, numbers may be quoted or
// carry a fraction (truncated toward zero), booleans may be quoted or 0/1.
// Unlike Java, a null attributes, groupRetryPolicy, policy type or
// customized "next" table is replaced by its default instead of being
// kept as null, because the 5.5 proxy dereferences all four. Errors wrap
// ErrInvalidField and name the member. encoding/json is used (admin path,
// not hot).

// DecodeSubscriptionGroupConfig parses a SubscriptionGroupConfig JSON object
// (a 200 request body, a 352 reply). The result starts from
// NewSubscriptionGroupConfig("") and takes each member present; GroupName
// stays "" when absent (the caller validates it with ValidateGroup). An
// empty body or JSON null is an error here: a Java broker treats them as
// "nothing to store" and answers SUCCESS, which the caller decides. The
// returned value shares no memory with b. Any goroutine.
func DecodeSubscriptionGroupConfig(b []byte) (SubscriptionGroupConfig, error) {
	m, err := rawObject("subscription group", b)
	if err != nil {
		return SubscriptionGroupConfig{}, err
	}
	if m == nil {
		return SubscriptionGroupConfig{}, fmt.Errorf("%w: subscription group body is empty or null", ErrInvalidField)
	}
	return decodeSubscriptionGroupMembers(m)
}

func decodeSubscriptionGroupMembers(m map[string]json.RawMessage) (SubscriptionGroupConfig, error) {
	c := NewSubscriptionGroupConfig("")
	d := memberDecoder{what: "subscription group", m: m}
	d.str("groupName", &c.GroupName)
	d.boolean("consumeEnable", &c.ConsumeEnable)
	d.boolean("consumeFromMinEnable", &c.ConsumeFromMinEnable)
	d.boolean("consumeBroadcastEnable", &c.ConsumeBroadcastEnable)
	d.boolean("consumeMessageOrderly", &c.ConsumeMessageOrderly)
	d.i32("retryQueueNums", &c.RetryQueueNums)
	d.i32("retryMaxTimes", &c.RetryMaxTimes)
	d.i64("brokerId", &c.BrokerID)
	d.i64("whichBrokerWhenConsumeSlowly", &c.WhichBrokerWhenConsumeSlowly)
	d.boolean("notifyConsumerIdsChangedEnable", &c.NotifyConsumerIDsChangedEnable)
	d.i32("groupSysFlag", &c.GroupSysFlag)
	d.i32("consumeTimeoutMinute", &c.ConsumeTimeoutMinute)
	if raw, ok := d.object("groupRetryPolicy"); ok {
		c.GroupRetryPolicy = decodeGroupRetryPolicy(&d, raw)
	}
	if raw, ok := d.object("attributes"); ok {
		for k, v := range raw {
			var s string
			d.value("attributes."+k, v, func(v json.RawMessage) error { return rawString(v, &s) })
			c.Attributes[k] = s
		}
	}
	if raw, ok := d.m["subscriptionDataSet"]; ok && !isNull(raw) {
		var elems []json.RawMessage
		d.value("subscriptionDataSet", raw, func(v json.RawMessage) error { return json.Unmarshal(v, &elems) })
		c.SubscriptionDataSet = make([]SimpleSubscriptionData, 0, len(elems))
		for _, e := range elems {
			em, err := rawObject("subscriptionDataSet element", e)
			if err != nil {
				d.fail(err)
				break
			}
			if em == nil {
				continue
			}
			ed := memberDecoder{what: "subscriptionDataSet element", m: em}
			var s SimpleSubscriptionData
			ed.str("topic", &s.Topic)
			ed.str("expressionType", &s.ExpressionType)
			ed.str("expression", &s.Expression)
			ed.i64("version", &s.Version)
			d.fail(ed.err)
			c.SubscriptionDataSet = append(c.SubscriptionDataSet, s)
		}
	}
	if d.err != nil {
		return SubscriptionGroupConfig{}, d.err
	}
	return c, nil
}

func decodeGroupRetryPolicy(d *memberDecoder, m map[string]json.RawMessage) GroupRetryPolicy {
	p := GroupRetryPolicy{Type: GroupRetryPolicyCustomized}
	pd := memberDecoder{what: "groupRetryPolicy", m: m}
	var typ string
	pd.str("type", &typ)
	if typ == GroupRetryPolicyExponential {
		p.Type = typ // anything else reads as CUSTOMIZED, as GroupRetryPolicy.getRetryPolicy does
	}
	if em, ok := pd.object("exponentialRetryPolicy"); ok {
		e := &ExponentialRetryPolicy{InitialMillis: DefaultExponentialInitialMillis,
			MaxMillis: DefaultExponentialMaxMillis, Multiplier: DefaultExponentialMultiplier}
		ed := memberDecoder{what: "exponentialRetryPolicy", m: em}
		ed.i64("initial", &e.InitialMillis)
		ed.i64("max", &e.MaxMillis)
		ed.i64("multiplier", &e.Multiplier)
		pd.fail(ed.err)
		p.Exponential = e
	}
	if cm, ok := pd.object("customizedRetryPolicy"); ok {
		cp := &CustomizedRetryPolicy{}
		if raw, ok := cm["next"]; ok && !isNull(raw) {
			var elems []json.RawMessage
			pd.value("customizedRetryPolicy.next", raw, func(v json.RawMessage) error { return json.Unmarshal(v, &elems) })
			cp.NextMillis = make([]int64, 0, len(elems))
			for _, e := range elems {
				n, _, err := rawInt(e, 64)
				if err != nil {
					pd.fail(fmt.Errorf("%w: groupRetryPolicy customizedRetryPolicy.next: %v", ErrInvalidField, err))
					break
				}
				cp.NextMillis = append(cp.NextMillis, n)
			}
		} else {
			cp.NextMillis = DefaultCustomizedRetryNextMillis()
		}
		p.Customized = cp
	}
	d.fail(pd.err)
	return p
}

// DecodeSubscriptionGroupWrapper parses a GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// (201) body. Table values decode as DecodeSubscriptionGroupConfig does; a
// null value is skipped; the table key is not copied into GroupName. A
// missing dataVersion member reads as zeros. Errors wrap ErrInvalidField.
func DecodeSubscriptionGroupWrapper(b []byte) (SubscriptionGroupWrapper, error) {
	m, err := rawObject("subscription group table", b)
	if err != nil {
		return SubscriptionGroupWrapper{}, err
	}
	var w SubscriptionGroupWrapper
	d := memberDecoder{what: "subscription group table", m: m}
	if dv, ok := d.object("dataVersion"); ok {
		vd := memberDecoder{what: "dataVersion", m: dv}
		vd.i64("counter", &w.DataVersion.Counter)
		vd.i64("stateVersion", &w.DataVersion.StateVersion)
		vd.i64("timestamp", &w.DataVersion.Timestamp)
		d.fail(vd.err)
	}
	if ft, ok := d.object("forbiddenTable"); ok {
		w.ForbiddenTable = make(map[string]map[string]int32, len(ft))
		for g, raw := range ft {
			tm, err := rawObject("forbiddenTable."+g, raw)
			d.fail(err)
			topics := make(map[string]int32, len(tm))
			td := memberDecoder{what: "forbiddenTable." + g, m: tm}
			for t := range tm {
				var v int32
				td.i32(t, &v)
				topics[t] = v
			}
			d.fail(td.err)
			w.ForbiddenTable[g] = topics
		}
	}
	if st, ok := d.object("subscriptionGroupTable"); ok {
		w.SubscriptionGroupTable = make(map[string]SubscriptionGroupConfig, len(st))
		for g, raw := range st {
			cm, err := rawObject("subscriptionGroupTable."+g, raw)
			if err != nil || cm == nil {
				d.fail(err)
				continue
			}
			c, err := decodeSubscriptionGroupMembers(cm)
			d.fail(err)
			w.SubscriptionGroupTable[g] = c
		}
	}
	if d.err != nil {
		return SubscriptionGroupWrapper{}, d.err
	}
	return w, nil
}

// memberDecoder reads typed members of one JSON object with a sticky error.
type memberDecoder struct {
	what string
	m    map[string]json.RawMessage
	err  error
}

func (d *memberDecoder) fail(err error) {
	if d.err == nil && err != nil {
		d.err = err
	}
}

// value runs parse on member name's raw value and records its error.
func (d *memberDecoder) value(name string, raw json.RawMessage, parse func(json.RawMessage) error) {
	if err := parse(raw); err != nil {
		d.fail(fmt.Errorf("%w: %s member %s: %v", ErrInvalidField, d.what, name, err))
	}
}

func (d *memberDecoder) str(name string, dst *string) {
	if raw, ok := d.m[name]; ok {
		d.value(name, raw, func(v json.RawMessage) error { return rawString(v, dst) })
	}
}

func (d *memberDecoder) boolean(name string, dst *bool) {
	if raw, ok := d.m[name]; ok {
		d.value(name, raw, func(v json.RawMessage) error { return rawBool(v, dst) })
	}
}

func (d *memberDecoder) i64(name string, dst *int64) {
	if raw, ok := d.m[name]; ok {
		d.value(name, raw, func(v json.RawMessage) error {
			n, set, err := rawInt(v, 64)
			if set {
				*dst = n
			}
			return err
		})
	}
}

func (d *memberDecoder) i32(name string, dst *int32) {
	if raw, ok := d.m[name]; ok {
		d.value(name, raw, func(v json.RawMessage) error {
			n, set, err := rawInt(v, 32)
			if set {
				*dst = int32(n)
			}
			return err
		})
	}
}

// object returns member name as a map; ok is false when it is absent or
// null (then the caller keeps its default).
func (d *memberDecoder) object(name string) (map[string]json.RawMessage, bool) {
	raw, ok := d.m[name]
	if !ok {
		return nil, false
	}
	m, err := rawObject(d.what+" member "+name, raw)
	d.fail(err)
	return m, m != nil
}

// rawObject parses an object into its members; JSON null gives a nil map
// and no error. Errors wrap ErrInvalidField.
func rawObject(what string, b []byte) (map[string]json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || isNull(b) {
		return nil, nil
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("%w: %s: not a JSON object", ErrInvalidField, what)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidField, what, err)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m, nil
}

func isNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// rawString reads a string member; null reads as "", a number or boolean
// as its literal text (fastjson2 converts them the same way).
func rawString(raw json.RawMessage, dst *string) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case isNull(raw):
		*dst = ""
	case len(raw) > 0 && raw[0] == '"':
		return json.Unmarshal(raw, dst)
	case len(raw) > 0 && (raw[0] == '{' || raw[0] == '['):
		return fmt.Errorf("want a string, got %.20s", raw)
	default:
		*dst = string(raw)
	}
	return nil
}

// rawBool reads true/false, "true"/"false" (any case) or a number (non-zero
// is true); null and "" leave dst unchanged.
func rawBool(raw json.RawMessage, dst *bool) error {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 0 && s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
	}
	switch {
	case s == "null" || s == "":
		return nil
	case strings.EqualFold(s, "true"):
		*dst = true
	case strings.EqualFold(s, "false"):
		*dst = false
	default:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("want a boolean, got %.20q", s)
		}
		*dst = f != 0
	}
	return nil
}

// rawInt reads an integer of the given bit size from a number or a quoted
// number; a fraction is truncated toward zero. set is false for null and "".
func rawInt(raw json.RawMessage, bits int) (n int64, set bool, err error) {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 0 && s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, err
		}
		s = strings.TrimSpace(s)
	}
	if s == "null" || s == "" {
		return 0, false, nil
	}
	if n, err := strconv.ParseInt(s, 10, bits); err == nil {
		return n, true, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, fmt.Errorf("want an integer, got %.20q", s)
	}
	f = math.Trunc(f)
	limit := math.Ldexp(1, bits-1)
	if f < -limit || f >= limit {
		return 0, false, fmt.Errorf("%.20q out of range for %d bits", s, bits)
	}
	return int64(f), true, nil
}
