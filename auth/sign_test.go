package auth

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

func TestSign_VerifyRoundTripAndTamper(t *testing.T) {
	p := newMacPool("secret-1")
	ext := map[string]string{"AccessKey": "ak", "topic": "T", "queueId": "3"}
	ext[FieldSignature] = client.Sign(ext, []byte("b"), "secret-1")
	req := &codec.Command{Code: 10, Version: codec.CurrentVersion, ExtFields: ext, Body: []byte("b")}
	require.True(t, p.verify(req, ext[FieldSignature]))
	req.Body = []byte("c")
	require.False(t, p.verify(req, ext[FieldSignature]), "body is signed")
	req.Body = []byte("b")
	ext["queueId"] = "4"
	require.False(t, p.verify(req, ext[FieldSignature]), "every extField is signed")
	ext["queueId"] = "3"
	require.False(t, newMacPool("secret-2").verify(req, ext[FieldSignature]), "another secret")
	require.False(t, p.verify(req, ""))
	require.False(t, p.verify(req, strings.Repeat("A", 1<<20)))
}

// FuzzVerify feeds odd extFields, bodies and signatures through the whole
// check: it must never panic, and must accept exactly the signature Sign
// computes.
func FuzzVerify(f *testing.F) {
	f.Add("topic", "T", "AccessKey", "u1", []byte("body"), "sig", int32(10))
	f.Add("", "", "Signature", "", []byte{}, "", int32(34))
	f.Add("\xff\xfe", strings.Repeat("v", 4096), "a", "\x00", []byte{0, 1}, "=", int32(-1))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, body []byte, sig string, code int32) {
		s := newState()
		s.putUser(User{Username: "u1", Password: "pw-1234567", Type: UserNormal, Status: UserEnable})
		ext := map[string]string{k1: v1, k2: v2}
		req := &codec.Command{Code: code, Version: codec.CurrentVersion, ExtFields: ext, Body: body}
		_, _ = s.authenticate(ext[FieldAccessKey], req)
		var buf [4]need
		_, _ = needsOf(buf[:0], req, "C")
		if ext[FieldAccessKey] == "u1" {
			delete(ext, FieldSignature)
			good := client.Sign(ext, body, "pw-1234567")
			ext[FieldSignature] = good
			if _, err := s.authenticate("u1", req); err != nil {
				t.Fatalf("own signature refused: %v", err)
			}
			if sig != good {
				ext[FieldSignature] = sig
				if _, err := s.authenticate("u1", req); err == nil {
					t.Fatalf("signature %q accepted, want %q", sig, good)
				}
			}
		}
	})
}

// A signed ACK as a client puts it on the wire verifies: with a JSON
// header it decodes into the typed slots (no ExtFields map; a ROCKETMQ
// header's int16 code cannot carry 200051, so that one is a map); a
// field changed after signing does not, nor does a SecurityToken added
// after signing.
func TestSign_TypedAckFrameVerifies(t *testing.T) {
	p := newMacPool("secret-1")
	for _, binary := range []bool{false, true} {
		ext := map[string]string{"consumerGroup": "G", "topic": "T", "queueId": "3", "offset": "41",
			"extraInfo": "41 1764640000000 60000 1 popshim-a 3 41", "bname": "popshim-a", FieldAccessKey: "ak"}
		sign := func() { delete(ext, FieldSignature); ext[FieldSignature] = client.Sign(ext, nil, "secret-1") }
		decode := func() *codec.Command {
			c := &codec.Command{Code: codec.RequestAckMessage, Version: codec.CurrentVersion, Opaque: 7, ExtFields: ext}
			var f []byte
			if binary {
				f = codec.AppendFrameBinary(nil, c)
			} else {
				f = codec.AppendFrame(nil, c)
			}
			got, err := codec.DecodeFrame(f)
			require.NoError(t, err)
			return got
		}
		sign()
		got := decode()
		require.Equal(t, binary, got.ExtFields != nil, "binary=%v: a signed JSON ACK keeps the typed decode", binary)
		sig, ok := got.Ext(FieldSignature)
		require.True(t, ok)
		require.True(t, p.verify(got, sig), "binary=%v", binary)

		ext["offset"] = "42" // changed after signing
		got = decode()
		require.False(t, p.verify(got, sig), "binary=%v: offset is signed", binary)
		ext["offset"] = "41"

		ext[FieldSecurityToken] = "tok" // added after signing
		got = decode()
		require.False(t, p.verify(got, sig), "binary=%v: SecurityToken is signed", binary)
		sign()
		got = decode()
		require.Equal(t, binary, got.ExtFields != nil)
		sig, _ = got.Ext(FieldSignature)
		require.True(t, p.verify(got, sig), "binary=%v: signed with SecurityToken", binary)
		delete(ext, FieldSecurityToken)
	}
}
