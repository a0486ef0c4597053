package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// jsonHeader mirrors the JSON members of RemotingCommand.java. Unknown
// members are ignored and missing ones keep Java's defaults.
type jsonHeader struct {
	Code      json.Number       `json:"code"`
	Language  string            `json:"language"`
	Version   json.Number       `json:"version"`
	Opaque    json.Number       `json:"opaque"`
	Flag      json.Number       `json:"flag"`
	Remark    string            `json:"remark"`
	ExtFields map[string]string `json:"extFields"`
}

func decodeJSONHeader(b []byte, cmd *Command) error {
	var h jsonHeader
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("%w: JSON: %v", ErrBadHeader, err)
	}
	var err error
	if cmd.Code, err = jsonInt32("code", h.Code); err != nil {
		return err
	}
	if cmd.Version, err = jsonInt32("version", h.Version); err != nil {
		return err
	}
	if cmd.Opaque, err = jsonInt32("opaque", h.Opaque); err != nil {
		return err
	}
	if cmd.Flag, err = jsonInt32("flag", h.Flag); err != nil {
		return err
	}
	cmd.Language = h.Language
	if cmd.Language == "" {
		cmd.Language = "JAVA"
	}
	cmd.Remark = h.Remark
	cmd.ExtFields = h.ExtFields
	return nil
}

func jsonInt32(name string, n json.Number) (int32, error) {
	if n == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(string(n), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: member %q is not an int32: %q", ErrBadHeader, name, string(n))
	}
	return int32(v), nil
}

// appendJSONHeader writes the header as a Java broker's fastjson does:
// compact, members in alphabetical order, null members omitted. extFields
// keys are sorted so output is deterministic.
func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	if len(c.ExtFields) > 0 {
		dst = append(dst, `,"extFields":{`...)
		var stack [16]string
		keys := stack[:0]
		for k := range c.ExtFields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSONString(dst, c.ExtFields[k])
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	lang := c.Language
	if lang == "" {
		lang = "JAVA"
	}
	dst = append(dst, `,"language":`...)
	dst = appendJSONString(dst, lang)
	dst = append(dst, `,"opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	if c.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = appendJSONString(dst, c.Remark)
	}
	dst = append(dst, `,"serializeTypeCurrentRPC":"JSON","version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way fastjson writes it:
// '"' and '\\' escaped, control bytes below 0x20 escaped, everything else
// (non-ASCII included) raw.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
	}
	return append(dst, '"')
}
