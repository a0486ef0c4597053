package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"slices"
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
	var arr [24]string
	keys := arr[:0]
	for k := range ext {
		if k == FieldSignature || (version <= version493 && k == uniqueKeyQueryField) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		_, _ = h.Write(stringBytes(ext[k]))
	}
	_, _ = h.Write(body)
}

// macPool holds HMAC-SHA1 states keyed with one user's password, so a
// verification resets a keyed state instead of hashing the key again.
type macPool struct {
	pool sync.Pool
}

func newMacPool(secret string) *macPool {
	key := []byte(secret)
	p := &macPool{}
	p.pool.New = func() any { return hmac.New(sha1.New, key) }
	return p
}

// verify reports whether sig is the signature of req under the pool's key,
// comparing in constant time. Any goroutine.
func (p *macPool) verify(req *codec.Command, sig string) bool {
	m := p.pool.Get().(hash.Hash)
	m.Reset()
	writeContent(m, req.ExtFields, req.Body, req.Version)
	var sum [sha1.Size]byte
	var enc [28]byte // base64 of 20 bytes
	base64.StdEncoding.Encode(enc[:], m.Sum(sum[:0]))
	p.pool.Put(m)
	return subtle.ConstantTimeCompare(enc[:], stringBytes(sig)) == 1
}

// stringBytes views s as bytes for a hash write, which never keeps or
// changes them.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
