package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"sync"
	"unsafe"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// ExtFields the ACL client hook adds (client/.../acl/common/SessionCredentials.java);
// the same names as package client's, which signs requests.
const (
	FieldAccessKey     = client.FieldAccessKey
	FieldSignature     = client.FieldSignature
	FieldSecurityToken = client.FieldSecurityToken
)

// macState is one keyed HMAC-SHA1 state with its scratch space.
type macState struct {
	h   hash.Hash
	sc  client.SignedContent // the content builder Sign uses too
	sum [sha1.Size]byte      // Sum's destination (a stack array would escape through the interface)
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
		return &macState{h: hmac.New(sha1.New, key), sc: client.SignedContent{Fields: make([]codec.ExtField, 0, 16)}}
	}
	return p
}

// verify reports whether sig is the signature of req under the pool's key,
// comparing in constant time. Any goroutine.
func (p *macPool) verify(req *codec.Command, sig string) bool {
	m := p.pool.Get().(*macState)
	m.h.Reset()
	m.sc.Fields = req.AppendFields(m.sc.Fields[:0])
	m.sc.Write(m.h, req.Body, req.Version)
	var enc [28]byte // base64 of 20 bytes
	base64.StdEncoding.Encode(enc[:], m.h.Sum(m.sum[:0]))
	p.pool.Put(m)
	return subtle.ConstantTimeCompare(enc[:], stringBytes(sig)) == 1
}

// stringBytes views s as bytes for a comparison, which never keeps or
// changes them.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
