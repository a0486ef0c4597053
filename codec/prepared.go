package codec

import (
	"encoding/binary"
	"math"
)

// MinPreparedOpaque is the smallest opaque a prepared frame can carry. Every
// opaque in [MinPreparedOpaque, math.MaxInt32] has exactly ten decimal
// digits, so a frame encoded once can take any of them by overwriting ten
// bytes of its JSON header, without re-encoding or changing a length.
const MinPreparedOpaque int32 = 1_000_000_000

// AppendPreparedFrame appends the frame of c exactly as AppendFrame would if
// c.Opaque were MinPreparedOpaque, and returns the extended slice and the
// offset, relative to the start of the appended frame, of the opaque's ten
// digits. Copy the frame and call PatchOpaque on the copy to send it with a
// fresh opaque (remoting.Client.InvokePreparedAsync does). c is not
// modified. For load generators that send many requests built in advance.
func AppendPreparedFrame(dst []byte, c *Command) ([]byte, int) {
	start := len(dst)
	tmp := *c
	tmp.Opaque = MinPreparedOpaque
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst, at := appendJSONHeaderAt(dst, &tmp)
	hlen := len(dst) - start - 8
	dst = append(dst, c.Body...)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(SerializeJSON)<<24|uint32(hlen)&0xFFFFFF)
	return dst, at - start
}

// PatchOpaque writes opaque as ten ASCII digits at frame[at:at+10], the
// place AppendPreparedFrame reported. opaque must be in
// [MinPreparedOpaque, math.MaxInt32]; anything else panics (a caller bug:
// it would change the header length).
func PatchOpaque(frame []byte, at int, opaque int32) {
	if opaque < MinPreparedOpaque || opaque > math.MaxInt32 {
		panic("codec: PatchOpaque: opaque outside the ten-digit range")
	}
	d := frame[at : at+10]
	for i := 9; i >= 0; i-- {
		d[i] = byte('0' + opaque%10)
		opaque /= 10
	}
}
