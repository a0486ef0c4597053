package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"sync"
	"unsafe"

	"github.com/popshim/popshim/codec"
)

// ExtFields the ACL client hook adds (client/.../acl/common/SessionCredentials.java).
const (
	FieldAccessKey     = "AccessKey"
	FieldSignature     = "Signature"
	FieldSecurityToken = "SecurityToken"
)

// uniqueKeyQueryField is MixAll.UNIQUE_MSG_QUERY_FLAG, left out of the
// signed content of requests from clients at or below V4_9_3.
const uniqueKeyQueryField = "_UNIQUE_KEY_QUERY"

// version493 is MQVersion.Version.V4_9_3's ordinal.
const version493 = 395

// Sign returns the signature RocketMQ's AclClientRPCHook puts in the
// Signature extField: base64(HMAC-SHA1(secret, values of ext sorted by key,
// Signature left out, concatenated, then body)). Tests and the bench client
// use it to sign requests; any goroutine.
func Sign(ext map[string]string, body []byte, secret string) string {
	m := hmac.New(sha1.New, []byte(secret))
	writeContent(m, ext, body, codecCurrent)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// codecCurrent is a version above V4_9_3, so Sign keeps every field.
const codecCurrent = codec.CurrentVersion

// writeContent feeds the signed content of a request to h, as
// DefaultAuthenticationContextBuilder rebuilds it from what the broker
// received: every extField but Signature, sorted by key, values only, then
// the body. For version ≤ V4_9_3, _UNIQUE_KEY_QUERY is left out too.
func writeContent(h hash.Hash, ext map[string]string, body []byte, version int32) {
	var sc scratch
	for k, v := range ext {
		sc.fields = append(sc.fields, codec.ExtField{Key: k, Value: v})
	}
	sc.write(h, body, version)
}

// scratch is the reusable space of one content computation: the fields
// to sort and the buffer the values are concatenated in, so the hash gets
// few large writes and nothing is allocated per request.
type scratch struct {
	fields []codec.ExtField // filled by the caller, in any order
	buf    []byte
}

// write feeds the content of sc.fields and body to h (writeContent) and
// empties sc.fields. A typed ACK or CHANGE header arrives already sorted
// (codec.Command.AppendFields), so the sort is one pass.
func (sc *scratch) write(h hash.Hash, body []byte, version int32) {
	fs := sc.fields
	n := 0
	for _, f := range fs {
		if f.Key == FieldSignature || (version <= version493 && f.Key == uniqueKeyQueryField) {
			continue
		}
		fs[n] = f
		n++
	}
	clear(fs[n:])
	fs = fs[:n]
	// Insertion sort: a request has about ten fields.
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].Key < fs[j-1].Key; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
	b := sc.buf[:0]
	for _, f := range fs {
		if len(b)+len(f.Value) > cap(b) && len(b) > 0 {
			_, _ = h.Write(b)
			b = b[:0]
		}
		if len(f.Value) > cap(b) {
			_, _ = h.Write(stringBytes(f.Value))
			continue
		}
		b = append(b, f.Value...)
	}
	_, _ = h.Write(b)
	_, _ = h.Write(body)
	clear(fs) // drop the references to this request's strings
	sc.fields, sc.buf = fs[:0], b[:0]
}

// macState is one keyed HMAC-SHA1 state with its scratch space.
type macState struct {
	h   hash.Hash
	sc  scratch
	sum [sha1.Size]byte // Sum's destination (a stack array would escape through the interface)
}

// macPool holds HMAC-SHA1 states keyed with one user's password, so a
// verification resets a keyed state instead of hashing the key again.
type macPool struct {
	pool sync.Pool
}

func newMacPool(secret string) *macPool {
	key := []byte(secret)
	p := &macPool{}
	p.pool.New = func() any {
		return &macState{h: hmac.New(sha1.New, key), sc: scratch{fields: make([]codec.ExtField, 0, 16), buf: make([]byte, 0, 1024)}}
	}
	return p
}

// verify reports whether sig is the signature of req under the pool's key,
// comparing in constant time. Any goroutine.
func (p *macPool) verify(req *codec.Command, sig string) bool {
	m := p.pool.Get().(*macState)
	m.h.Reset()
	m.sc.fields = req.AppendFields(m.sc.fields[:0])
	m.sc.write(m.h, req.Body, req.Version)
	var enc [28]byte // base64 of 20 bytes
	base64.StdEncoding.Encode(enc[:], m.h.Sum(m.sum[:0]))
	p.pool.Put(m)
	return subtle.ConstantTimeCompare(enc[:], stringBytes(sig)) == 1
}

// stringBytes views s as bytes for a hash write, which never keeps or
// changes them.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
