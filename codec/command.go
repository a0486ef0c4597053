package codec

import (
	"strconv"
)

// Serialize types carried in the high byte of the header-length word
// (RocketMQ remoting/.../protocol/SerializeType.java).
const (
	// SerializeJSON is a JSON header (type 0), the default of every client.
	SerializeJSON byte = 0
	// SerializeRocketMQ is the ROCKETMQ binary header (type 1).
	SerializeRocketMQ byte = 1
)

// Flag bits of Command.Flag (RemotingCommand.java RPC_TYPE / RPC_ONEWAY).
const (
	// FlagResponse marks a response frame (bit 0).
	FlagResponse int32 = 1 << 0
	// FlagOneway marks a request that must not be answered (bit 1).
	FlagOneway int32 = 1 << 1
)

// CurrentVersion is the version ordinal popshim stamps into every response:
// 479 is MQVersion.Version.V5_3_3. The Java client stores it per broker after
// HEART_BEAT and refuses SQL92 filters below V4_1_0, so it must be modern.
const CurrentVersion int32 = 479

// Command is one decoded remoting frame, request or response
// (RemotingCommand.java). A Command produced by DecodeFrame owns all of its
// memory: no field aliases the input buffer.
//
// Code is kept as int32 because the POP request codes (200050 and up) do not
// fit in 16 bits. ExtFields holds the command-specific header as
// string→string, exactly as on the wire; typed headers decode from it.
// Exception: in an ACK_MESSAGE or CHANGE_MESSAGE_INVISIBLETIME request from
// DecodeFrame, ExtFields is nil and the fields are read with
// DecodeAckMessageRequest, DecodeChangeInvisibleTimeRequest or Ext.
// Body may be nil; an empty body and an absent body are the same on the wire.
type Command struct {
	Code          int32
	Language      string
	Version       int32
	Opaque        int32
	Flag          int32
	Remark        string
	ExtFields     map[string]string
	Body          []byte
	SerializeType byte
	// typed holds the header fields instead of ExtFields for the request
	// codes of typedTable (DecodeFrame only; see typed_ext.go). A pointer,
	// so that a response (NewResponse) is ~150 bytes and not ~480: a
	// decoded frame allocates its slots with the Command in one object
	// (frameCommand).
	typed *typedExt
	// rawExt holds the members of the JSON extFields object, already
	// encoded with their keys in order, for a response whose header was
	// written by an EncodeJSON method (SendMessageResponseHeader) instead
	// of SetExt; the JSON encoder writes it when ExtFields is empty.
	rawExt []byte
}

// IsResponse reports whether flag bit 0 is set.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports whether flag bit 1 is set: the sender expects no reply.
// The Go client never sets it even for its "oneway" calls.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }

// NewRequest builds a JSON request with the given code and ext fields, as a
// Java client would send it. opaque is chosen by the caller.
func NewRequest(code int32, opaque int32, ext map[string]string, body []byte) *Command {
	return &Command{Code: code, Language: "JAVA", Version: CurrentVersion, Opaque: opaque, ExtFields: ext, Body: body}
}

// NewResponse builds the response to req with the given response code and
// remark: flag bit 0 set, opaque copied, version CurrentVersion, language
// JAVA, JSON header. Safe to call from any goroutine; req is only read.
func NewResponse(req *Command, code int32, remark string) *Command {
	return &Command{Code: code, Language: "JAVA", Version: CurrentVersion, Opaque: req.Opaque, Flag: FlagResponse, Remark: remark}
}

// SetExt sets one ext field, allocating the map when needed.
func (c *Command) SetExt(key, value string) {
	if c.ExtFields == nil {
		c.ExtFields = make(map[string]string, 8)
	}
	c.ExtFields[key] = value
}

// SetExtInt64 sets one ext field to the decimal form of v.
func (c *Command) SetExtInt64(key string, v int64) { c.SetExt(key, strconv.FormatInt(v, 10)) }

// Ext returns the ext field key and whether it was present, from
// ExtFields or, for an ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME or
// single-letter SEND frame
// whose fields DecodeFrame kept in slots (codec/typed_ext.go), from the
// slots: a header with a key the slots do not keep is decoded into
// ExtFields, so every received field is found either way. The string is
// the decoded header's own (no copy). Any goroutine; c is only read.
func (c *Command) Ext(key string) (string, bool) {
	r := c.fields()
	return r.get(key)
}
