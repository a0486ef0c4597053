package client

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"hash"
	"unsafe"

	"github.com/popshim/popshim/codec"
)

// ExtFields of a signed request, as RocketMQ's ACL client hook adds them
// (acl/common/SessionCredentials.java): the user's access key, the
// base64 HMAC-SHA1 signature and the optional security token.
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
// Signature left out, concatenated, then body)), for a request of the
// current version (codec.CurrentVersion). ext is only read. Any goroutine.
func Sign(ext map[string]string, body []byte, secret string) string {
	m := hmac.New(sha1.New, []byte(secret))
	var sc SignedContent
	for k, v := range ext {
		sc.Fields = append(sc.Fields, codec.ExtField{Key: k, Value: v})
	}
	sc.Write(m, body, codec.CurrentVersion)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// SignRequest signs req as AclClientRPCHook.doBeforeRequest does: it sets
// AccessKey to accessKey and Signature to Sign of the other extFields and
// the body under secretKey, replacing a Signature already there (so a
// request can be signed again after a change). A nil ExtFields map is
// created. Call it last, after every other field is set: a field changed
// afterwards makes the broker answer NO_PERMISSION. The caller's
// goroutine; it is what Options.BeforeRequest wants for a signing Conn.
func SignRequest(req *codec.Command, accessKey, secretKey string) {
	if req.ExtFields == nil {
		req.ExtFields = make(map[string]string, 2)
	}
	delete(req.ExtFields, FieldSignature)
	req.ExtFields[FieldAccessKey] = accessKey
	req.ExtFields[FieldSignature] = Sign(req.ExtFields, req.Body, secretKey)
}

// SignedContent is the content a request's signature covers, as the
// broker's DefaultAuthenticationContextBuilder rebuilds it from what it
// received: every extField but Signature, sorted by key, values only,
// concatenated, then the body. It is the one implementation of that
// content, used by Sign and by the broker's verifier (auth),
// which keeps one SignedContent per pooled HMAC state so a verification
// allocates nothing. The zero value is ready to use; one goroutine at a
// time.
type SignedContent struct {
	// Fields are the request's extFields in any order (codec.Command's
	// AppendFields fills them); Write empties it and keeps its capacity.
	Fields []codec.ExtField
	buf    []byte // values concatenated before a hash write, reused
}

// signedContentBuf is the capacity of SignedContent's value buffer: the
// values of a usual request fit, so the hash gets one write for them.
const signedContentBuf = 1024

// Write feeds the signed content of sc.Fields and body to h and empties
// sc.Fields. version is the request's header version: at or below
// V4_9_3 (395) _UNIQUE_KEY_QUERY is left out too, as the Java broker does
// for old clients. The content reaches h in few large writes; long
// values are written from the field's own memory. A typed ACK or CHANGE
// header arrives already sorted (codec.Command.AppendFields), so the sort
// is one pass. The first Write allocates a 1 KiB buffer that later ones
// reuse. Nothing of Fields or body is kept.
func (sc *SignedContent) Write(h hash.Hash, body []byte, version int32) {
	fs := sc.Fields
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
	if sc.buf == nil {
		sc.buf = make([]byte, 0, signedContentBuf)
	}
	b := sc.buf[:0]
	for _, f := range fs {
		if len(b)+len(f.Value) > cap(b) && len(b) > 0 {
			_, _ = h.Write(b)
			b = b[:0]
		}
		if len(f.Value) > cap(b) {
			_, _ = h.Write(unsafe.Slice(unsafe.StringData(f.Value), len(f.Value))) // a hash never keeps or changes its input
			continue
		}
		b = append(b, f.Value...)
	}
	_, _ = h.Write(b)
	_, _ = h.Write(body)
	clear(fs) // drop the references to this request's strings
	sc.Fields, sc.buf = fs[:0], b[:0]
}
