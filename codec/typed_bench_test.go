package codec

import "testing"

// changeFrame is a CHANGE_MESSAGE_INVISIBLETIME request as the Java client
// sends it.
func changeFrame() []byte {
	c := &Command{Code: RequestChangeMessageInvisibleTime, Language: "JAVA", Version: CurrentVersion, Opaque: 77}
	ChangeInvisibleTimeRequestHeader{ConsumerGroup: "bench_group", Topic: "bench_topic", QueueID: 3, Offset: 123456,
		ExtraInfo: "123456 1764640000000 300000 1 0 popshim-a 3 123456", InvisibleTime: 300000, BrokerName: "popshim-a"}.Encode(c)
	return AppendFrame(nil, c)
}

// BenchmarkDecodeAckHeader is the event loop's decode of one ACK_MESSAGE
// (frame, then typed header) through the ExtFields map ("map", the path
// before the typed headers) and through the slots ("typed"), side by side.
func BenchmarkDecodeAckHeader(b *testing.B) {
	benchHeaderDecode(b, benchGolden(b, "e01_ack_request.txt"),
		func(c *Command) error { _, err := DecodeAckMessageRequestHeader(c.ExtFields); return err },
		func(c *Command) error { _, err := DecodeAckMessageRequest(c); return err })
}

// BenchmarkDecodeChangeHeader is BenchmarkDecodeAckHeader for
// CHANGE_MESSAGE_INVISIBLETIME.
func BenchmarkDecodeChangeHeader(b *testing.B) {
	benchHeaderDecode(b, changeFrame(),
		func(c *Command) error { _, err := DecodeChangeInvisibleTimeRequestHeader(c.ExtFields); return err },
		func(c *Command) error { _, err := DecodeChangeInvisibleTimeRequest(c); return err })
}

// benchHeaderDecode runs frame through the frame decoder and a header
// decoder twice: with every field in ExtFields then viaMap ("map"), and
// with DecodeFrame's slots then viaSlots ("typed").
func benchHeaderDecode(b *testing.B, frame []byte, viaMap, viaSlots func(*Command) error) {
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, err := decodeFrameAs(frame, false)
			if err == nil {
				err = viaMap(c)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, err := DecodeFrame(frame)
			if err == nil {
				err = viaSlots(c)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
