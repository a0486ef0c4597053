package codec

// Typed request headers: ACK_MESSAGE and
// CHANGE_MESSAGE_INVISIBLETIME, the requests a POP consumer sends most,
// are decoded from the frame straight into a fixed set of field slots
// instead of the ExtFields map (building the map, hashing and inserting
// six entries, was the largest part of decoding an ACK). Every other
// request code keeps the map. The slots see the same entries the map
// would hold (JSON: last duplicate wins, null removes, numbers and
// booleans kept as their text; ROCKETMQ: empty keys or values dropped);
// a header with any other key is decoded into the map instead (typedExt.extra). Java defines the fields in
// remoting/.../protocol/header/AckMessageRequestHeader.java and
// ChangeInvisibleTimeRequestHeader.java.

// typedFields are the keys kept in slots, in slot order, which is the
// order of their keys (Java's String.compareTo, byte order for ASCII):
// AppendFields lists a typed header already sorted, as the signature
// check of auth needs it. AccessKey, SecurityToken and Signature
// are what AclClientRPCHook adds to a signed request
// (client/.../acl/common/SessionCredentials.java), so a signed ACK keeps
// the typed decode.
var typedFields = [...]string{"AccessKey", "SecurityToken", "Signature", "bname", "consumerGroup", "extraInfo", "invisibleTime", "offset", "queueId", "topic"}

// typedExt holds the ext fields of a request whose code has a typed header.
type typedExt struct {
	code int32  // request code the slots were filled for; 0: not used, ExtFields holds the fields
	has  uint16 // bit i set: typedFields[i] present
	v    [len(typedFields)]string
	// extra: a ROCKETMQ (binary) header carried a key the slots do not
	// keep (a namespace, any field a newer client adds); the frame decoder then decodes it again
	// into ExtFields, so that whoever reads every field (the signature
	// check of auth) sees them all. A JSON header switches to the
	// map in the same pass (jsonScanner.extFields).
	extra bool
}

// typedCode reports whether requests of code decode into slots.
func typedCode(code int32) bool {
	return code == RequestAckMessage || code == RequestChangeMessageInvisibleTime
}

// typedSlot returns the slot of key, or -1 for a key not kept.
func typedSlot(key string) int {
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

func (t *typedExt) set(key, v string) {
	if i := typedSlot(key); i >= 0 {
		t.v[i] = v
		t.has |= 1 << i
	} else {
		t.extra = true
	}
}

// toMap returns the slot fields as a new ExtFields map.
func (t *typedExt) toMap() map[string]string {
	m := make(map[string]string, len(typedFields)+4)
	for i, k := range typedFields {
		if t.has&(1<<i) != 0 {
			m[k] = t.v[i]
		}
	}
	return m
}

func (t *typedExt) del(key string) {
	if i := typedSlot(key); i >= 0 {
		t.v[i] = ""
		t.has &^= 1 << i
	}
}

func (t *typedExt) get(key string) (string, bool) {
	i := typedSlot(key)
	if i < 0 || t.has&(1<<i) == 0 {
		return "", false
	}
	return t.v[i], true
}

// fields returns an extReader over c's header: the slots when the frame
// decoder filled them for c's code, else ExtFields.
func (c *Command) fields() extReader {
	if c.typed.code != 0 && c.typed.code == c.Code {
		return extReader{typed: &c.typed}
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
// a typed header in key order (typedFields), for ExtFields in map order.
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
	for i, k := range typedFields {
		if r.typed.has&(1<<i) != 0 {
			dst = append(dst, ExtField{k, r.typed.v[i]})
		}
	}
	return dst
}
