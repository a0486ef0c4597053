// Package codec reads and writes Apache RocketMQ remoting frames and the
// binary and text structures carried inside them. It imports neither gnet nor
// RocksDB, keeps no state, and every function is safe for concurrent use on
// distinct values.
//
// # Frames
//
// Frame layout (all integers big-endian), as in RocketMQ's
// remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java:
//
//	+--------------+--------------+-----------+------------+-----------+
//	| length int32 | serType byte | hlen u24  | header     | body      |
//	+--------------+--------------+-----------+------------+-----------+
//	  0              4              5           8            8+hlen
//
// length counts every byte after itself: 4 + hlen + len(body). serType 0 is
// a JSON header, 1 is the ROCKETMQ binary header. popshim accepts both and
// always replies with JSON, as a default Java broker does. A connection
// loop calls PeekFrame on its input until it reports a whole frame, then
// DecodeFrame on exactly those bytes; PeekFrame rejects a frame above the
// cap before any of it is buffered. AppendFrame / AppendFrameBinary write a
// frame into a caller-owned buffer, patching the lengths in place.
//
// # Headers
//
// A decoded Command keeps the command-specific header as ExtFields
// (string→string, exactly as on the wire), except ACK_MESSAGE,
// CHANGE_MESSAGE_INVISIBLETIME and single-letter SEND requests (codes 310,
// 320, 325), whose fields DecodeFrame keeps in fixed slots (typed_ext.go;
// read them with DecodeAckMessageRequest, DecodeChangeInvisibleTimeRequest,
// DecodeSendRequest, Ext or ExtMap). Typed headers live in
// headers_*.go: DecodeXxx(ext) returns the struct or a *FieldError naming the
// first missing (ErrMissingField) or unparsable (ErrInvalidField) field; the
// Java broker answers such requests with SYSTEM_ERROR and the message as
// remark. Response headers have Encode(cmd), which writes every field a Java
// broker always sends (Java primitives are never omitted). Request and
// response codes, and the response-code table with retriable flags, are in
// codes.go and response_codes.go.
//
// # Stored messages and POP strings
//
// message.go encodes and decodes the stored-record layout used in PULL and
// POP bodies (AppendMessage, DecodeMessage, DecodeMessages) and exports the
// byte positions popstore patches in place (RecordQueueOffsetPos,
// RecordPhysicalOffsetPos, RecordStoreTimestampPos). batch.go handles the
// SEND_BATCH_MESSAGE body, properties.go the properties string, msgid.go the
// offsetMsgId and UNIQ_KEY ids, extrainfo.go the receipt handle
// (ExtraInfo), offset_info.go the startOffsetInfo / msgOffsetInfo /
// orderCountInfo strings and topics.go the retry / DLQ topic names. The JSON
// bodies (batch ack, topic route, heartbeat, assignment, ...) are in
// batch_ack.go, route.go, heartbeat.go and bodies.go.
//
// # Ownership
//
// Decoders copy: a Command from DecodeFrame, a MessageExt from DecodeMessage
// and a Message from DecodeBatchBody share no memory with their input, which
// may be reused at once. Functions named Unsafe… return values that alias
// their input and are valid only while it is left unchanged; they document
// that lifetime. Typed header decoders and ParseExtraInfo return strings
// that share the (immutable) ext map values or the input string, so they
// allocate nothing. Append… encoders only append to dst and never retain it.
//
// The wire facts come from Apache RocketMQ's remoting module
// (remoting/.../protocol/RemotingCommand.java, RocketMQSerializable.java)
// and rocketmq-client-go (internal/remote/codec.go); the golden files in
// testdata/codec hold hand-built example frames, checked byte for byte.
package codec
