package codec

import (
	"encoding/binary"
	"fmt"
)

// languageNames maps the ROCKETMQ header's language byte to the enum name
// used in JSON (remoting/.../protocol/LanguageCode.java).
var languageNames = [...]string{"JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER", "HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS"}

func languageCode(name string) byte {
	for i, n := range languageNames {
		if n == name {
			return byte(i)
		}
	}
	return 0
}

// decodeBinaryHeader decodes the ROCKETMQ header (RocketMQSerializable.java):
// code i16, language u8, version i16, opaque i32, flag i32, remark
// (i32 len + bytes), ext block (i32 len + entries of i16 klen, key, i32 vlen,
// value). Every length is checked against the bytes left.
func decodeBinaryHeader(b []byte, cmd *Command) error {
	if len(b) < 21 {
		return fmt.Errorf("%w: ROCKETMQ header of %d bytes < 21", ErrBadHeader, len(b))
	}
	cmd.Code = int32(int16(binary.BigEndian.Uint16(b)))
	if l := int(b[2]); l < len(languageNames) {
		cmd.Language = languageNames[l]
	} else {
		cmd.Language = "OTHER"
	}
	cmd.Version = int32(int16(binary.BigEndian.Uint16(b[3:])))
	cmd.Opaque = int32(binary.BigEndian.Uint32(b[5:]))
	cmd.Flag = int32(binary.BigEndian.Uint32(b[9:]))
	off := 13
	rlen := int(int32(binary.BigEndian.Uint32(b[off:])))
	off += 4
	if rlen < 0 || rlen > len(b)-off-4 {
		return fmt.Errorf("%w: remark length %d at offset 13 exceeds %d bytes left", ErrBadHeader, rlen, len(b)-off-4)
	}
	cmd.Remark = string(b[off : off+rlen])
	off += rlen
	elen := int(int32(binary.BigEndian.Uint32(b[off:])))
	off += 4
	if elen < 0 || elen != len(b)-off {
		return fmt.Errorf("%w: ext length %d at offset %d, %d bytes left", ErrBadHeader, elen, off-4, len(b)-off)
	}
	if elen == 0 {
		return nil
	}
	ext := make(map[string]string, 8)
	for off < len(b) {
		if len(b)-off < 2 {
			return fmt.Errorf("%w: ext key length at offset %d truncated", ErrBadHeader, off)
		}
		klen := int(int16(binary.BigEndian.Uint16(b[off:])))
		off += 2
		if klen < 0 || klen > len(b)-off-4 {
			return fmt.Errorf("%w: ext key length %d at offset %d exceeds bytes left", ErrBadHeader, klen, off-2)
		}
		k := string(b[off : off+klen])
		off += klen
		vlen := int(int32(binary.BigEndian.Uint32(b[off:])))
		off += 4
		if vlen < 0 || vlen > len(b)-off {
			return fmt.Errorf("%w: ext value length %d at offset %d exceeds bytes left", ErrBadHeader, vlen, off-4)
		}
		ext[k] = string(b[off : off+vlen])
		off += vlen
	}
	cmd.ExtFields = ext
	return nil
}

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
	for k, v := range c.ExtFields {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(k)))
		dst = append(dst, k...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
		dst = append(dst, v...)
	}
	binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst
}
