package codec

// Typed request headers: ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME and
// the single-letter SEND requests (SEND_MESSAGE_V2, SEND_BATCH_MESSAGE,
// SEND_REPLY_MESSAGE_V2), the requests a POP consumer and a Java producer
// send most, are decoded from the frame straight into a fixed set of field
// slots instead of the ExtFields map (building the map, hashing and
// inserting six to fourteen entries, was the largest part of decoding
// them). Every other request code keeps the map. The slots see the same
// entries the map would hold (JSON: last duplicate wins, null removes,
// numbers and booleans kept as their text; ROCKETMQ: empty keys or values
// dropped); a header with any other key is decoded into the map instead
// (typedExt.extra). Java defines the fields in
// remoting/.../protocol/header/AckMessageRequestHeader.java,
// ChangeInvisibleTimeRequestHeader.java and SendMessageRequestHeaderV2.java.

// fieldTable is the slot layout of one family of typed headers.
type fieldTable struct {
	// keys are the keys kept in slots, in slot order, which is the order
	// of the keys (Java's String.compareTo, byte order for ASCII):
	// AppendFields lists a typed header already sorted, as the signature
	// check of auth needs it. AccessKey, SecurityToken and Signature are
	// what AclClientRPCHook adds to a signed request
	// (client/.../acl/common/SessionCredentials.java), so a signed request
	// keeps the typed decode.
	keys []string
}

// maxTypedFields is the most slots a fieldTable has (sendV2Fields).
const maxTypedFields = 22

// ackFields are the slots of ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME.
var ackFields = fieldTable{
	keys: []string{"AccessKey", "SecurityToken", "Signature", "bname", "consumerGroup", "extraInfo", "invisibleTime", "offset", "queueId", "topic"},
}

// ackSlot returns the slot of key in ackFields, or -1 for a key not kept.
func ackSlot(key string) int {
	switch key {
	case "AccessKey":
		return 0
	case "SecurityToken":
		return 1
	case "Signature":
		return 2
	case "bname":
		return 3
	case "consumerGroup":
		return 4
	case "extraInfo":
		return 5
	case "invisibleTime":
		return 6
	case "offset":
		return 7
	case "queueId":
		return 8
	case "topic":
		return 9
	}
	return -1
}

// sendV2Fields are the slots of the single-letter SEND headers (codes 310,
// 320, 325): a..n of SendMessageRequestHeaderV2.java, and the fields of its
// base classes (TopicQueueRequestHeader.java: lo; RpcRequestHeader.java:
// ns, nsd, bname, oway), which a Java client's JSON header carries when
// they are set; the V2 decoder falls back to bname for the broker name.
var sendV2Fields = fieldTable{
	keys: []string{"AccessKey", "SecurityToken", "Signature", "a", "b", "bname", "c", "d", "e", "f", "g", "h", "i", "j",
		"k", "l", "lo", "m", "n", "ns", "nsd", "oway"},
}

// sendV2Slot returns the slot of key in sendV2Fields, or -1 for a key not
// kept.
func sendV2Slot(key string) int {
	if len(key) == 1 {
		switch c := key[0]; {
		case c == 'a' || c == 'b':
			return 3 + int(c-'a')
		case c >= 'c' && c <= 'l':
			return 6 + int(c-'c')
		case c == 'm' || c == 'n':
			return 17 + int(c-'m')
		}
		return -1
	}
	switch key {
	case "AccessKey":
		return 0
	case "SecurityToken":
		return 1
	case "Signature":
		return 2
	case "bname":
		return 5
	case "lo":
		return 16
	case "ns":
		return 19
	case "nsd":
		return 20
	case "oway":
		return 21
	}
	return -1
}

// typedTable returns the slot layout of requests of code, or nil when
// they decode into ExtFields.
func typedTable(code int32) *fieldTable {
	switch code {
	case RequestAckMessage, RequestChangeMessageInvisibleTime:
		return &ackFields
	case RequestSendMessageV2, RequestSendBatchMessage, RequestSendReplyMessageV2:
		return &sendV2Fields
	}
	return nil
}

// typedExt holds the ext fields of a request whose code has a typed header.
type typedExt struct {
	code int32       // request code the slots were filled for; 0: not used, ExtFields holds the fields
	tab  *fieldTable // typedTable(code) when code != 0
	has  uint32      // bit i set: tab.keys[i] present
	v    [maxTypedFields]string
	// extra: a ROCKETMQ (binary) header carried a key the slots do not
	// keep (a namespace, any field a newer client adds); the frame decoder then decodes it again
	// into ExtFields, so that whoever reads every field (the signature
	// check of auth) sees them all. A JSON header switches to the
	// map in the same pass (jsonScanner.extFields).
	extra bool
}

// slotsFor makes c's slots (allocating them when c has none) the empty
// slots of a request of code and returns them.
func (c *Command) slotsFor(code int32) *typedExt {
	if c.typed == nil {
		c.typed = new(typedExt)
	}
	c.typed.begin(code)
	return c.typed
}

// begin makes t the empty slots of a request of code, whose code has a
// typedTable.
func (t *typedExt) begin(code int32) {
	*t = typedExt{code: code, tab: typedTable(code)}
}

// slot returns the slot of key in t's table, or -1. Direct calls (no
// function value), so a key converted from bytes for the call is not
// copied to the heap.
func (t *typedExt) slot(key string) int {
	if t.tab == &sendV2Fields {
		return sendV2Slot(key)
	}
	return ackSlot(key)
}

// setSlot stores v in slot i (a slot of t's table).
func (t *typedExt) setSlot(i int, v string) {
	t.v[i] = v
	t.has |= 1 << i
}

// toMap returns the slot fields as a new ExtFields map.
func (t *typedExt) toMap() map[string]string {
	m := make(map[string]string, len(t.tab.keys)+4)
	for i, k := range t.tab.keys {
		if t.has&(1<<i) != 0 {
			m[k] = t.v[i]
		}
	}
	return m
}

func (t *typedExt) get(key string) (string, bool) {
	i := t.slot(key)
	if i < 0 || t.has&(1<<i) == 0 {
		return "", false
	}
	return t.v[i], true
}

// fields returns an extReader over c's header: the slots when the frame
// decoder filled them for c's code, else ExtFields.
func (c *Command) fields() extReader {
	if c.typed != nil && c.typed.code != 0 && c.typed.code == c.Code {
		return extReader{typed: c.typed}
	}
	return extReader{ext: c.ExtFields}
}

// DecodeAckMessageRequest decodes the header of an ACK_MESSAGE request as
// DecodeAckMessageRequestHeader does, from the slots DecodeFrame filled
// (no map) or else from c.ExtFields; errors are *FieldError naming the
// field. Any goroutine; c is only read.
func DecodeAckMessageRequest(c *Command) (AckMessageRequestHeader, error) {
	r := c.fields()
	return decodeAck(&r)
}

// DecodeChangeInvisibleTimeRequest is DecodeAckMessageRequest for
// CHANGE_MESSAGE_INVISIBLETIME (DecodeChangeInvisibleTimeRequestHeader).
func DecodeChangeInvisibleTimeRequest(c *Command) (ChangeInvisibleTimeRequestHeader, error) {
	r := c.fields()
	return decodeChange(&r)
}

// ExtMap returns the header fields as a map: ExtFields, or for a request
// whose fields DecodeFrame kept in slots a new map of them (nil when none).
// For logs, tools and tests; handlers use the typed decoders. c is only
// read.
func (c *Command) ExtMap() map[string]string {
	r := c.fields()
	if r.typed == nil {
		return c.ExtFields
	}
	if r.typed.has == 0 {
		return nil
	}
	return r.typed.toMap()
}

// ExtField is one header field of a request, key and value as received.
type ExtField struct{ Key, Value string }

// AppendFields appends every header field of c to dst and returns it: for
// a typed header in key order (fieldTable.keys), for ExtFields in map order.
// The signature check (auth) sorts what it gets, so a typed header
// costs it no reordering and no map. Any goroutine; c is only read.
func (c *Command) AppendFields(dst []ExtField) []ExtField {
	r := c.fields()
	if r.typed == nil {
		for k, v := range c.ExtFields {
			dst = append(dst, ExtField{k, v})
		}
		return dst
	}
	for i, k := range r.typed.tab.keys {
		if r.typed.has&(1<<i) != 0 {
			dst = append(dst, ExtField{k, r.typed.v[i]})
		}
	}
	return dst
}
