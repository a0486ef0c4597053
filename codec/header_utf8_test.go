package codec

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestJSONHeaderInvalidUTF8: strings that are not UTF-8 (a remark quoting
// request bytes, an ext value from a ROCKETMQ binary header) are written
// with U+FFFD for each bad byte, valid multi-byte runes are kept raw, and
// the header decodes back to the same text.
func TestJSONHeaderInvalidUTF8(t *testing.T) {
	c := &Command{Code: MessageIllegal, Flag: 1, Opaque: 3, Version: 479,
		Remark:    "flag \"\xe8\" and \xff\xfe, kept: é€𝄞",
		ExtFields: map[string]string{"k\xc3": "v\xe2\x82"}}
	h := appendJSONHeader(nil, c)
	require.True(t, utf8.Valid(h), "%q", h)
	var got Command
	require.NoError(t, decodeJSONHeader(h, &got))
	require.Equal(t, "flag \"\uFFFD\" and \uFFFD\uFFFD, kept: é€𝄞", got.Remark)
	// a truncated sequence is one U+FFFD per byte, as encoding/json writes it
	require.Equal(t, map[string]string{"k\uFFFD": "v\uFFFD\uFFFD"}, got.ExtFields)
}
