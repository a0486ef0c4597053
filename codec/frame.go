package codec

import (
	"encoding/binary"
	"fmt"
)

// DefaultMaxFrame is the largest whole frame, length prefix included, that a
// Java peer accepts (16 MiB, NettyDecoder's frameMaxLength).
const DefaultMaxFrame = 16 << 20

// PeekFrame inspects the start of buf. It returns the size in bytes of the
// first whole frame (length prefix included) when buf holds all of it, or 0
// when more bytes are needed. It returns an error wrapping ErrFrameTooLarge
// when the announced frame exceeds maxFrame bytes, and ErrBadFrame when the
// length is negative or smaller than the header-length word; the caller must
// then close the connection. It reads at most 4 bytes and never allocates.
func PeekFrame(buf []byte, maxFrame int) (int, error) {
	if len(buf) < 4 {
		return 0, nil
	}
	length := int64(int32(binary.BigEndian.Uint32(buf)))
	if length < 4 {
		return 0, fmt.Errorf("%w: length %d < 4", ErrBadFrame, length)
	}
	if length+4 > int64(maxFrame) {
		return 0, fmt.Errorf("%w: %d bytes > max %d", ErrFrameTooLarge, length+4, maxFrame)
	}
	if int64(len(buf)) < length+4 {
		return 0, nil
	}
	return int(length) + 4, nil
}

// DecodeFrame decodes one whole frame (length prefix included, as sized by
// PeekFrame). The result owns its memory; frame may be reused afterwards.
// Errors wrap ErrBadFrame or ErrBadHeader and name the offending offset.
func DecodeFrame(frame []byte) (*Command, error) {
	cmd, err := decodeFrameAs(frame, true)
	if err == nil && len(cmd.Body) > 0 {
		cmd.Body = append([]byte(nil), cmd.Body...)
	}
	return cmd, err
}

// DecodeFrameBorrowing is DecodeFrame except that the Command's Body is
// not copied: it aliases frame[8+headerLength:] and is valid only while
// frame's bytes are (remoting borrows it for handlers registered with
// Router.HandleBorrowing). Header fields are copies, as in DecodeFrame.
func DecodeFrameBorrowing(frame []byte) (*Command, error) { return decodeFrameAs(frame, true) }

// frameCommand is a decoded frame's Command with its header slots, one
// allocation.
type frameCommand struct {
	cmd   Command
	slots typedExt
}

// decodeFrameAs is DecodeFrameBorrowing; typed=false keeps every
// request's fields in ExtFields (the reference the typed decoding is
// tested against).
func decodeFrameAs(frame []byte, typed bool) (*Command, error) {
	if len(frame) < 8 {
		return nil, fmt.Errorf("%w: %d bytes, need at least 8", ErrBadFrame, len(frame))
	}
	length := int(binary.BigEndian.Uint32(frame))
	if length != len(frame)-4 {
		return nil, fmt.Errorf("%w: length word %d, frame has %d", ErrBadFrame, length, len(frame)-4)
	}
	word := binary.BigEndian.Uint32(frame[4:])
	typ := byte(word >> 24)
	hlen := int(word & 0xFFFFFF)
	if hlen > length-4 {
		return nil, fmt.Errorf("%w: header length %d > %d bytes left at offset 8", ErrBadFrame, hlen, length-4)
	}
	header := frame[8 : 8+hlen]
	f := &frameCommand{cmd: Command{SerializeType: typ}}
	cmd := &f.cmd
	cmd.typed = &f.slots
	var err error
	switch typ {
	case SerializeJSON:
		if typed {
			err = decodeJSONHeader(header, cmd)
		} else {
			err = decodeJSONHeaderAs(header, cmd, false)
		}
	case SerializeRocketMQ:
		err = decodeBinaryHeaderAs(header, cmd, typed)
	default:
		err = fmt.Errorf("%w: unknown serialize type %d", ErrBadHeader, typ)
	}
	if err == nil && cmd.typed != nil && cmd.typed.extra {
		// a key the slots do not keep: every field goes into ExtFields
		*cmd = Command{SerializeType: typ}
		if typ == SerializeJSON {
			err = decodeJSONHeaderAs(header, cmd, false)
		} else {
			err = decodeBinaryHeaderAs(header, cmd, false)
		}
	}
	if err != nil {
		return nil, err
	}
	if body := frame[8+hlen:]; len(body) > 0 {
		cmd.Body = body
	}
	return cmd, nil
}

// AppendFrame appends the whole frame of c (length prefix, header word, JSON
// header, body) to dst and returns the extended slice. The header is always
// JSON, whatever c.SerializeType says. Lengths are patched in place; no
// intermediate buffer is used.
func AppendFrame(dst []byte, c *Command) []byte {
	dst, _ = appendFrameAt(dst, c)
	return dst
}

// appendFrameAt is AppendFrame that also returns the offset, relative to
// the start of the appended frame, of the opaque's first digit.
func appendFrameAt(dst []byte, c *Command) ([]byte, int) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst, at := appendJSONHeaderAt(dst, c)
	hlen := len(dst) - start - 8
	dst = append(dst, c.Body...)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(SerializeJSON)<<24|uint32(hlen)&0xFFFFFF)
	return dst, at - start
}

// AppendFrameBinary is AppendFrame with a ROCKETMQ binary header. Codes above
// 32767 are truncated to 16 bits as Java does; it exists for tests and for
// clients that want the binary form.
func AppendFrameBinary(dst []byte, c *Command) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = appendBinaryHeader(dst, c)
	hlen := len(dst) - start - 8
	dst = append(dst, c.Body...)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(SerializeRocketMQ)<<24|uint32(hlen)&0xFFFFFF)
	return dst
}
