package grpcserver

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/codec"
)

func gunzip(t testing.TB, b []byte) []byte {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gzip header: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("gzip data: %v", err)
	}
	return out
}

// A body compressed by a remoting producer (zlib, sysFlag 0x1) reaches a v5
// consumer as GZIP that gzip readers inflate; LZ4 bodies pass unchanged.
func TestCompressedBodies(t *testing.T) {
	plain := bytes.Repeat([]byte("compressible body 0123456789 "), 400)
	z := zlibOf(t, plain)
	rec := codec.MessageExt{
		Message: codec.Message{Topic: "T", Body: z, Properties: "POP_CK\x011 2 3 4 0 b 0 1\x02"},
		SysFlag: codec.SysFlagCompressed,
	}
	out, err := MessageOf(&rec, DeliveryOptions{MaxInflatedBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	sp := out.GetSystemProperties()
	if sp.GetBodyEncoding() != v2.Encoding_GZIP || out.GetBody()[0] != 0x1f || out.GetBody()[1] != 0x8b {
		t.Fatalf("encoding %v body % x", sp.GetBodyEncoding(), out.GetBody()[:4])
	}
	if !bytes.Equal(gunzip(t, out.GetBody()), plain) {
		t.Fatal("gzip body does not inflate to the original")
	}
	if len(out.GetBody()) != len(z)-6+18 {
		t.Errorf("re-framed size %d, zlib %d: deflate data not kept as is", len(out.GetBody()), len(z))
	}
	if sp.GetBodyDigest().GetChecksum() != md5Upper(out.GetBody()) {
		t.Error("digest is not of the body sent")
	}
	// Over the inflation bound: sent as stored.
	out, _ = MessageOf(&rec, DeliveryOptions{MaxInflatedBytes: 100})
	if !bytes.Equal(out.GetBody(), z) || out.GetSystemProperties().GetBodyEncoding() != v2.Encoding_GZIP {
		t.Error("bounded inflation: body should pass unchanged")
	}
	rec.SysFlag = codec.SysFlagCompressed | codec.CompressionLZ4<<8
	rec.Body = []byte{0x04, 0x22, 0x4d, 0x18, 1, 2, 3}
	out, _ = MessageOf(&rec, DeliveryOptions{})
	if !bytes.Equal(out.GetBody(), rec.Body) || out.GetSystemProperties().GetBodyEncoding() != v2.Encoding_GZIP {
		t.Error("LZ4 body should pass unchanged labelled GZIP")
	}
}

// A GZIP body from a v5 producer is stored as zlib with the compressed bit.
func TestSendGzipBody(t *testing.T) {
	plain := bytes.Repeat([]byte("v5 gzip "), 300)
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(plain); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m := goClientMessage("T", buf.Bytes())
	m.SystemProperties.BodyEncoding = v2.Encoding_GZIP
	in, st := SendInputOf(m, testPeer, testNow, DefaultSendLimits())
	if st != nil {
		t.Fatal(st)
	}
	if in.Header.SysFlag != codec.SysFlagCompressed|codec.CompressionZLIB<<8 {
		t.Errorf("sysFlag %#x", in.Header.SysFlag)
	}
	r, err := zlib.NewReader(bytes.NewReader(in.Body))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(r); !bytes.Equal(got, plain) {
		t.Error("stored zlib body differs")
	}
	// And back to a v5 consumer: gzip of the same content.
	rec := storeAndPop(t, in, 0, 0, 0, 0)
	out, _ := MessageOf(&rec, DeliveryOptions{})
	if !bytes.Equal(gunzip(t, out.GetBody()), plain) {
		t.Error("consumer body differs")
	}
	m.Body = []byte("not gzip")
	if _, st := SendInputOf(m, testPeer, testNow, DefaultSendLimits()); st.GetCode() != v2.Code_MESSAGE_CORRUPTED {
		t.Errorf("bad gzip: %v", st)
	}
	limits := DefaultSendLimits()
	limits.MaxInflatedBytes = 100
	m.Body = buf.Bytes()
	if _, st := SendInputOf(m, testPeer, testNow, limits); st.GetCode() != v2.Code_MESSAGE_CORRUPTED {
		t.Errorf("gzip bomb bound: %v", st)
	}
}
