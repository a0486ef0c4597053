package codec

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// languageNames maps the ROCKETMQ header's language byte to the enum name
// used in JSON (remoting/.../protocol/LanguageCode.java).
var languageNames = [...]string{"JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER", "HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS"}

// LanguageCodeName returns name when it is a LanguageCode.java enum name,
// else the nearest one: "GOLANG" (the v5 gRPC SDKs' protobuf Language) →
// "GO", "DOT_NET" → "DOTNET", anything else → "OTHER". Admin bodies carry
// it (Connection, ProducerInfo), and a Java tool reading a name its enum
// lacks gets null and fails printing it.
func LanguageCodeName(name string) string {
	switch name {
	case "GOLANG":
		return "GO"
	case "DOT_NET":
		return "DOTNET"
	}
	if slices.Contains(languageNames[:], name) {
		return name
	}
	return "OTHER"
}

func languageCode(name string) byte {
	for i, n := range languageNames {
		if n == name {
			return byte(i)
		}
	}
	return 0
}

// decodeBinaryHeaderAs decodes the ROCKETMQ header (RocketMQSerializable.java):
// code i16, language u8, version i16, opaque i32, flag i32, remark
// (i32 len + bytes), ext block (i32 len + entries of i16 klen, key, i32 vlen,
// value). Every length is checked against the bytes left, and the ext block
// must end exactly at the end of the header. Entries with an empty key or
// value are dropped (Java reads zero-length strings as null). All strings
// share one copy of the header bytes; known keys are interned.
//
// With typed, the fields of the request codes of typedTable go into cmd's
// slots instead of ExtFields.
func decodeBinaryHeaderAs(b []byte, cmd *Command, typed bool) error {
	if len(b) < 21 {
		return fmt.Errorf("%w: ROCKETMQ header of %d bytes < 21", ErrBadHeader, len(b))
	}
	r := reader{b: b}
	cmd.Code = int32(r.i16("code"))
	if l := int(r.u8("language")); l < len(languageNames) {
		cmd.Language = languageNames[l]
	} else {
		cmd.Language = "OTHER"
	}
	cmd.Version = int32(r.i16("version"))
	cmd.Opaque = r.i32("opaque")
	cmd.Flag = r.i32("flag")
	rlen := int(r.i32("remarkLength"))
	if rlen < 0 || rlen > r.remaining()-4 {
		return fmt.Errorf("%w: remark length %d at offset 13 exceeds %d bytes left", ErrBadHeader, rlen, r.remaining()-4)
	}
	remark := r.span(rlen, "remark")
	elen := int(r.i32("extLength"))
	if elen < 0 || elen != r.remaining() {
		return fmt.Errorf("%w: ext length %d at offset %d, %d bytes left", ErrBadHeader, elen, r.off-4, r.remaining())
	}
	var all string // one copy of the header for remark, keys and values
	str := func(span []byte, start int) string {
		if all == "" {
			all = string(b)
		}
		return all[start : start+len(span)]
	}
	if rlen > 0 {
		cmd.Remark = str(remark, 17)
	}
	if elen == 0 {
		return nil
	}
	var ext map[string]string
	typed = typed && typedTable(cmd.Code) != nil
	if typed {
		cmd.slotsFor(cmd.Code)
	} else {
		ext = make(map[string]string, 8)
	}
	for r.remaining() > 0 {
		klen := int(r.i16("ext key length"))
		kAt := r.off
		key := r.span(klen, "ext key")
		vlen := int(r.i32("ext value length"))
		vAt := r.off
		val := r.span(vlen, "ext value")
		if err := r.complete(); err != nil {
			return fmt.Errorf("%w: %w", ErrBadHeader, err)
		}
		if klen == 0 || vlen == 0 {
			continue
		}
		if typed {
			if i := cmd.typed.slot(string(key)); i >= 0 {
				cmd.typed.setSlot(i, str(val, vAt))
			} else {
				cmd.typed.extra = true
			}
			continue
		}
		k, ok := internedStrings[string(key)]
		if !ok {
			k = str(key, kAt)
		}
		ext[k] = str(val, vAt)
	}
	cmd.ExtFields = ext
	return nil
}

// appendBinaryHeader writes the ROCKETMQ header with ext keys sorted, so the
// output is deterministic.
func appendBinaryHeader(dst []byte, c *Command) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(c.Code))
	dst = append(dst, languageCode(c.Language))
	dst = binary.BigEndian.AppendUint16(dst, uint16(c.Version))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Opaque))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)
	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var stack [16]string
	keys := stack[:0]
	ext := c.ExtMap()
	for k := range ext {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := ext[k]
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(k)))
		dst = append(dst, k...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
		dst = append(dst, v...)
	}
	binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst
}
