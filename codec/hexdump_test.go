package codec

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// parseHexDump reads "0000  00 01 ...  |ascii|" lines (offset column and
// ASCII column optional) into bytes.
func parseHexDump(lines []string) ([]byte, error) {
	var out []byte
	for _, l := range lines {
		if i := strings.IndexByte(l, '|'); i >= 0 {
			l = l[:i]
		}
		for _, tok := range strings.Fields(l) {
			if len(tok) != 2 {
				continue // offset column
			}
			b, err := hex.DecodeString(tok)
			if err != nil {
				return nil, fmt.Errorf("bad hex %q in %q", tok, l)
			}
			out = append(out, b...)
		}
	}
	return out, nil
}

// formatHexDump writes b the way the reference document does.
func formatHexDump(b []byte) []string {
	var out []string
	for off := 0; off < len(b); off += 16 {
		row := b[off:min(off+16, len(b))]
		var sb strings.Builder
		fmt.Fprintf(&sb, "%04x ", off)
		for i := 0; i < 16; i++ {
			if i < len(row) {
				fmt.Fprintf(&sb, " %02x", row[i])
			} else {
				sb.WriteString("   ")
			}
		}
		sb.WriteString("  |")
		for _, c := range row {
			if c >= 0x20 && c < 0x7f {
				sb.WriteByte(c)
			} else {
				sb.WriteByte('.')
			}
		}
		sb.WriteByte('|')
		out = append(out, sb.String())
	}
	return out
}

// requireSameBytes fails with both hex dumps and the first differing offset.
func requireSameBytes(t testing.TB, what string, want, got []byte) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	t.Fatalf("%s: bytes differ at offset %#x (want %d bytes, got %d)\nwant:\n%s\ngot:\n%s", what, i, len(want), len(got),
		strings.Join(formatHexDump(want), "\n"), strings.Join(formatHexDump(got), "\n"))
}

// roundTrip encodes v with enc, decodes with dec and re-encodes, failing
// with hex dumps when the two encodings differ.
func roundTrip[T any](t testing.TB, what string, v T, enc func([]byte, T) []byte, dec func([]byte) (T, error)) T {
	t.Helper()
	b1 := enc(nil, v)
	got, err := dec(b1)
	if err != nil {
		t.Fatalf("%s: decode of own encoding: %v\n%s", what, err, strings.Join(formatHexDump(b1), "\n"))
	}
	b2 := enc(nil, got)
	requireSameBytes(t, what+" (re-encoded)", b1, b2)
	return got
}
