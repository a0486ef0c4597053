package client

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// recorder is a hash.Hash that keeps what was written, to check the
// signed content itself.
type recorder struct{ bytes.Buffer }

func (r *recorder) Sum(b []byte) []byte { return b }
func (r *recorder) Size() int           { return 0 }
func (r *recorder) BlockSize() int      { return 1 }

// writeContent feeds the signed content of ext and body, for a request of
// version, to h through a fresh SignedContent.
func writeContent(h *recorder, ext map[string]string, body []byte, version int32) {
	var sc SignedContent
	for k, v := range ext {
		sc.Fields = append(sc.Fields, codec.ExtField{Key: k, Value: v})
	}
	sc.Write(h, body, version)
}

// The vector of RocketMQ's AclSignerTest: HMAC-SHA1("RocketMQ", key
// "12345678"), base64.
func TestSign_JavaVector(t *testing.T) {
	m := hmac.New(sha1.New, []byte("12345678"))
	m.Write([]byte("RocketMQ"))
	require.Equal(t, "IUc8rrO/0gDch8CjObLQsW2rsiA=", base64.StdEncoding.EncodeToString(m.Sum(nil)))
	require.Equal(t, "IUc8rrO/0gDch8CjObLQsW2rsiA=", Sign(map[string]string{"k": "RocketMQ"}, nil, "12345678"))
}

// The content of DefaultAuthenticationContextBuilderTest.build2: values
// sorted by key (upper case first), Signature left out.
func TestSign_ContentAsJavaBuildsIt(t *testing.T) {
	ext := map[string]string{"topic": "topic-test", "queueId": "0", "bornTimestamp": "117036786441330",
		"bname": "brokerName-1", "AccessKey": "abc", "Signature": "ZG26exJ5u9q1fwZlO4DCmz2Rs88="}
	var r recorder
	writeContent(&r, ext, nil, 441)
	require.Equal(t, "abcbrokerName-11170367864413300topic-test", r.String())
	r.Reset()
	writeContent(&r, ext, []byte("BODY"), 441)
	require.Equal(t, "abcbrokerName-11170367864413300topic-testBODY", r.String())
	// _UNIQUE_KEY_QUERY is dropped only for clients at or below V4_9_3.
	ext[uniqueKeyQueryField] = "X"
	r.Reset()
	writeContent(&r, ext, nil, version493)
	require.Equal(t, "abcbrokerName-11170367864413300topic-test", r.String())
	r.Reset()
	writeContent(&r, ext, nil, version493+1)
	require.Equal(t, "abcXbrokerName-11170367864413300topic-test", r.String())
}

// One SignedContent reused for requests whose values overflow its buffer
// (a value longer than the buffer, values that fill it several times)
// writes the same content as a plain concatenation each time, and keeps
// no field of an earlier request.
func TestSignedContent_ReuseAndLongValues(t *testing.T) {
	reqs := []map[string]string{
		{"a": strings.Repeat("x", 3*signedContentBuf), "b": "short", FieldSignature: "old"},
		{"k1": strings.Repeat("1", 700), "k2": strings.Repeat("2", 700), "k3": strings.Repeat("3", 700)},
		{"only": "v"},
	}
	var sc SignedContent
	for i, ext := range reqs {
		keys := make([]string, 0, len(ext))
		for k := range ext {
			if k != FieldSignature {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var want strings.Builder
		for _, k := range keys {
			want.WriteString(ext[k])
		}
		want.WriteString("BODY")
		for k, v := range ext {
			sc.Fields = append(sc.Fields, codec.ExtField{Key: k, Value: v})
		}
		var r recorder
		sc.Write(&r, []byte("BODY"), codec.CurrentVersion)
		require.Equal(t, want.String(), r.String(), "request %d", i)
		require.Empty(t, sc.Fields, "request %d: Write empties Fields", i)
	}
}

// SignRequest adds AccessKey and a Signature over everything else, and
// signing again after a change replaces the old Signature instead of
// covering it.
func TestSignRequest(t *testing.T) {
	req := codec.NewRequest(codec.RequestAckMessage, 1, nil, []byte("b"))
	req.ExtFields = nil
	SignRequest(req, "ak", "sk")
	require.Equal(t, "ak", req.ExtFields[FieldAccessKey])
	require.Equal(t, Sign(map[string]string{FieldAccessKey: "ak"}, []byte("b"), "sk"), req.ExtFields[FieldSignature])

	req.ExtFields["topic"] = "T"
	first := req.ExtFields[FieldSignature]
	SignRequest(req, "ak", "sk")
	want := Sign(map[string]string{FieldAccessKey: "ak", "topic": "T"}, []byte("b"), "sk")
	require.Equal(t, want, req.ExtFields[FieldSignature])
	require.NotEqual(t, first, want)
	require.Len(t, req.ExtFields, 3)
}
