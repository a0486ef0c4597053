package codec

// MinPreparedOpaque is the smallest opaque a prepared frame can carry. Every
// opaque in [MinPreparedOpaque, math.MaxInt32] has exactly ten decimal
// digits, so a frame encoded once can take any of them by overwriting ten
// bytes of its JSON header, without re-encoding or changing a length.
const MinPreparedOpaque int32 = 1_000_000_000

// AppendPreparedFrame appends the frame of c exactly as AppendFrame would if
// c.Opaque were MinPreparedOpaque, and returns the extended slice and the
// offset, relative to the start of the appended frame, of the opaque's ten
// digits. Copy the frame and call PatchOpaque on the copy to send it with a
// fresh opaque (client.Conn.InvokePreparedAsync does). c is not
// modified. For load generators that send many requests built in advance.
func AppendPreparedFrame(dst []byte, c *Command) ([]byte, int) {
	tmp := *c
	tmp.Opaque = MinPreparedOpaque
	return appendFrameAt(dst, &tmp)
}

// PatchOpaque writes opaque as ten ASCII digits at frame[at:at+10], the
// place AppendPreparedFrame reported. opaque must be in
// [MinPreparedOpaque, math.MaxInt32] (an int32 has no larger value); a
// smaller one panics (a caller bug: it would change the header length).
func PatchOpaque(frame []byte, at int, opaque int32) {
	if opaque < MinPreparedOpaque {
		panic("codec: PatchOpaque: opaque outside the ten-digit range")
	}
	d := frame[at : at+10]
	for i := 9; i >= 0; i-- {
		d[i] = byte('0' + opaque%10)
		opaque /= 10
	}
}
