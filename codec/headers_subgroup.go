package codec

import "strconv"

// Typed headers of the subscription-group admin requests. UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
// (200) has no header (its body is a SubscriptionGroupConfig).

// GetSubscriptionGroupConfigRequestHeader is the header of
// GET_SUBSCRIPTIONGROUP_CONFIG (352,
// remoting/.../protocol/header/GetSubscriptionGroupConfigRequestHeader.java):
// group, required.
type GetSubscriptionGroupConfigRequestHeader = GroupHeader

// DecodeGetSubscriptionGroupConfigRequestHeader decodes 352's header;
// errors are *FieldError naming "group".
func DecodeGetSubscriptionGroupConfigRequestHeader(ext map[string]string) (GetSubscriptionGroupConfigRequestHeader, error) {
	return DecodeGroupHeader(ext)
}

// Encode sets group on c.
func (h GroupHeader) Encode(c *Command) { c.SetExt("group", h.Group) }

// DeleteSubscriptionGroupRequestHeader is the header of
// DELETE_SUBSCRIPTIONGROUP (207,
// remoting/.../protocol/header/DeleteSubscriptionGroupRequestHeader.java):
// groupName is required; cleanOffset (default false) also removes the
// group's consumer offsets. Java's base fields (bname, lo, ns) are ignored.
type DeleteSubscriptionGroupRequestHeader struct {
	GroupName   string
	CleanOffset bool
}

// DecodeDeleteSubscriptionGroupRequestHeader decodes 207's header; errors
// are *FieldError. cleanOffset reads as Boolean.parseBoolean does.
func DecodeDeleteSubscriptionGroupRequestHeader(ext map[string]string) (DeleteSubscriptionGroupRequestHeader, error) {
	r := extReader{ext: ext}
	h := DeleteSubscriptionGroupRequestHeader{GroupName: r.str("groupName"), CleanOffset: r.optBool("cleanOffset", false)}
	return h, r.Err()
}

// Encode sets groupName and cleanOffset on c, as the Java admin client does.
func (h DeleteSubscriptionGroupRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	w.str("groupName", h.GroupName)
	w.boolean("cleanOffset", h.CleanOffset)
}

// GetAllSubscriptionGroupRequestHeader is the header of
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201,
// remoting/.../protocol/header/GetAllSubscriptionGroupRequestHeader.java,
// 5.x paging). Every field is optional here: clients before paging send
// no header at all, although Java marks groupSeq @CFNotNull. A broker may
// ignore the paging fields and answer the whole table (see
// GetAllSubscriptionGroupResponseHeader).
type GetAllSubscriptionGroupRequestHeader struct {
	GroupSeq       int32 // first table index (name order) wanted; valid when HasGroupSeq
	HasGroupSeq    bool
	MaxGroupNum    int32 // page size the client wants (5.5 client: 2000); valid when HasMaxGroupNum
	HasMaxGroupNum bool
	DataVersion    string // DataVersion JSON of the previous page, "" on the first
}

// DecodeGetAllSubscriptionGroupRequestHeader decodes 201's header; a
// present but non-numeric groupSeq or maxGroupNum is a *FieldError.
func DecodeGetAllSubscriptionGroupRequestHeader(ext map[string]string) (GetAllSubscriptionGroupRequestHeader, error) {
	r := extReader{ext: ext}
	var h GetAllSubscriptionGroupRequestHeader
	h.GroupSeq, h.HasGroupSeq = r.optI32Has("groupSeq")
	h.MaxGroupNum, h.HasMaxGroupNum = r.optI32Has("maxGroupNum")
	h.DataVersion = r.optStr("dataVersion")
	return h, r.Err()
}

// Encode sets the present fields on c.
func (h GetAllSubscriptionGroupRequestHeader) Encode(c *Command) {
	w := extWriter{c}
	if h.HasGroupSeq {
		w.i32("groupSeq", h.GroupSeq)
	}
	if h.HasMaxGroupNum {
		w.i32("maxGroupNum", h.MaxGroupNum)
	}
	w.optStr("dataVersion", h.DataVersion)
}

// GetAllSubscriptionGroupResponseHeader is the header of a 201 reply
// (GetAllSubscriptionGroupResponseHeader.java): totalGroupNum, the size of
// the whole table. A 5.5 client stops paging when the header is absent or
// once it has read about totalGroupNum entries, so a broker that always
// returns the whole table may set it to the table size or leave it out.
type GetAllSubscriptionGroupResponseHeader struct {
	TotalGroupNum int32
}

// Encode sets totalGroupNum on c.
func (h GetAllSubscriptionGroupResponseHeader) Encode(c *Command) {
	c.SetExt("totalGroupNum", strconv.FormatInt(int64(h.TotalGroupNum), 10))
}

// DecodeGetAllSubscriptionGroupResponseHeader decodes the reply header;
// totalGroupNum is required (errors are *FieldError).
func DecodeGetAllSubscriptionGroupResponseHeader(ext map[string]string) (GetAllSubscriptionGroupResponseHeader, error) {
	r := extReader{ext: ext}
	h := GetAllSubscriptionGroupResponseHeader{TotalGroupNum: r.i32("totalGroupNum")}
	return h, r.Err()
}
