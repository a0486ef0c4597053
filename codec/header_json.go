package codec

import (
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// internedStrings holds ext keys and language names that appear in almost
// every header, so decoding them costs no allocation.
var internedStrings = func() map[string]string {
	m := map[string]string{}
	for _, s := range languageNames {
		m[s] = s
	}
	for _, s := range []string{
		"consumerGroup", "topic", "queueId", "offset", "extraInfo", "bname", "invisibleTime", "popTime",
		"AccessKey", "Signature", "SecurityToken",
		"reviveQid", "restNum", "startOffsetInfo", "msgOffsetInfo", "orderCountInfo", "maxMsgNums", "pollTime",
		"bornTime", "initMode", "expType", "exp", "order", "attemptId", "queueOffset", "msgId", "transactionId",
		"MSG_REGION", "TRACE_ON", "producerGroup", "defaultTopic", "defaultTopicQueueNums", "sysFlag",
		"bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch",
		"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "commitOffset",
		"suspendTimeoutMillis", "subscription", "subVersion", "expressionType", "suggestWhichBrokerId",
		"nextBeginOffset", "minOffset", "maxOffset", "hasMsg", "pollingFull", "clientID", "timestamp", "group",
		"delayLevel", "originMsgId", "originTopic", "committed", "setZeroIfNotFound", "ns", "nsd", "oway", "lo",
		"0", "1", "2", "3", "true", "false", "-1", "60000", "TBW102",
	} {
		m[s] = s
	}
	return m
}()

// internOrKeep returns the interned copy of a plain string, or keeps it in the arena.
func (s *jsonScanner) internOrKeep(raw []byte, plain bool) string {
	if plain {
		if v, ok := internedStrings[string(raw)]; ok {
			return v
		}
	}
	return s.keep(raw, plain)
}

// decodeJSONHeader decodes a JSON header (RemotingCommand.java members).
// Member order is free, unknown members of any type are skipped (but must
// be valid JSON), missing members keep Java's defaults (language JAVA), null
// counts as missing. code/version/opaque/flag must be integers within int32,
// as JSON numbers or strings holding one. extFields values may be strings,
// numbers or booleans (the latter two are kept as their JSON text) or null
// (entry skipped); objects and arrays there are an error. Nothing but
// whitespace may follow the object. All strings share one arena
// allocation (sized to the header, so it is not regrown unless escapes
// expand); only the language name is interned. Copying an extFields key or
// value into the arena is cheaper than hashing it for an intern lookup,
// and the arena is allocated anyway.
//
// For the request codes of typedTable the fields go into cmd's slots
// instead of ExtFields when "code" precedes "extFields" (Java and Go
// clients write code first); should the final code differ from the one the
// slots were filled for, the header is decoded again into the map.
func decodeJSONHeader(b []byte, cmd *Command) error {
	st := cmd.SerializeType
	err := decodeJSONHeaderAs(b, cmd, true)
	if err == nil && cmd.typed != nil && cmd.typed.code != 0 && cmd.typed.code != cmd.Code {
		*cmd = Command{SerializeType: st}
		err = decodeJSONHeaderAs(b, cmd, false)
	}
	return err
}

// decodeJSONHeaderAs is decodeJSONHeader; typed=false always builds
// ExtFields.
func decodeJSONHeaderAs(b []byte, cmd *Command, typed bool) error {
	s := jsonScanner{b: b, arena: make([]byte, 0, len(b))}
	cmd.Language = "JAVA"
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return s.end()
	}
	for {
		key, plain, err := s.rawString()
		if err != nil {
			return err
		}
		if !plain {
			key = unescape(nil, key)
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if s.isNull() {
			// null means "absent": the member falls back to its default.
			switch string(key) {
			case "code":
				cmd.Code = 0
			case "version":
				cmd.Version = 0
			case "opaque":
				cmd.Opaque = 0
			case "flag":
				cmd.Flag = 0
			case "language":
				cmd.Language = "JAVA"
			case "remark":
				cmd.Remark = ""
			case "extFields":
				cmd.ExtFields = nil
				if cmd.typed != nil {
					cmd.typed.has = 0
				}
			}
		} else {
			switch string(key) {
			case "code":
				cmd.Code, err = s.int32Value("code")
			case "version":
				cmd.Version, err = s.int32Value("version")
			case "opaque":
				cmd.Opaque, err = s.int32Value("opaque")
			case "flag":
				cmd.Flag, err = s.int32Value("flag")
			case "language":
				var raw []byte
				if raw, plain, err = s.rawString(); err == nil {
					cmd.Language = s.internOrKeep(raw, plain)
					if cmd.Language == "" {
						cmd.Language = "JAVA"
					}
				}
			case "remark":
				cmd.Remark, err = s.str()
			case "extFields":
				err = s.extFields(cmd, typed && typedTable(cmd.Code) != nil)
			default:
				err = s.skip()
			}
			if err != nil {
				return err
			}
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return s.end()
		default:
			return s.errorf("want ',' or '}'")
		}
	}
}

func (s *jsonScanner) end() error {
	if s.peek() != 0 || s.i != len(s.b) {
		return s.errorf("data after the header object")
	}
	return nil
}

// extFields decodes the extFields object into a new cmd.ExtFields, or into
// cmd.typed when typed (then ExtFields is left nil).
func (s *jsonScanner) extFields(cmd *Command, typed bool) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	var ext map[string]string
	if cmd.typed != nil {
		*cmd.typed = typedExt{}
	}
	var t *typedExt
	if typed {
		t = cmd.slotsFor(cmd.Code)
		cmd.ExtFields = nil
	} else {
		ext = make(map[string]string, 8)
		cmd.ExtFields = ext
	}
	// put stores v under key, or under slot (key's slot, -1 for none) while
	// typed.
	put := func(slot int, key, v string) {
		if typed {
			if slot >= 0 {
				t.setSlot(slot, v)
				return
			}
			// a key the slots do not keep (a namespace, a newer field): the
			// rest of the object, and what the slots hold so far, go into
			// the map, in one pass
			ext = t.toMap()
			cmd.ExtFields = ext
			*t = typedExt{}
			typed = false
		}
		ext[key] = v
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		rawKey, plain, err := s.rawString()
		if err != nil {
			return err
		}
		// A slot key is looked up in the frame's bytes and never kept:
		// only a key that may reach the map is copied into the arena.
		slot, key := -1, ""
		if typed && plain {
			slot = t.slot(unsafe.String(unsafe.SliceData(rawKey), len(rawKey)))
		}
		if slot < 0 {
			key = s.keep(rawKey, plain)
			if typed {
				slot = t.slot(key)
			}
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		switch c := s.peek(); {
		case c == '"':
			raw, plain, err := s.rawString()
			if err != nil {
				return err
			}
			put(slot, key, s.keep(raw, plain))
		case c == '-' || c >= '0' && c <= '9':
			num, err := s.number()
			if err != nil {
				return err
			}
			put(slot, key, s.keep(num, true))
		case c == 'n':
			if !s.isNull() {
				return s.errorf("bad literal")
			}
			if !typed {
				delete(ext, key)
			} else if slot >= 0 {
				t.v[slot] = ""
				t.has &^= 1 << slot
			}
		case c == 't' || c == 'f':
			lit, err := s.literal()
			if err != nil {
				return err
			}
			put(slot, key, s.keep(lit, true))
		default:
			return s.errorf("extFields value for %q is not a string, number or boolean", rawKey)
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or '}'")
		}
	}
}

// appendJSONHeader writes the header as a Java broker's fastjson does:
// compact, members in alphabetical order, null members omitted. extFields
// keys are sorted so output is deterministic.
func appendJSONHeader(dst []byte, c *Command) []byte {
	dst, _ = appendJSONHeaderAt(dst, c)
	return dst
}

// appendJSONHeaderAt is appendJSONHeader that also returns the offset in
// dst of the first digit (or '-') of the opaque member's value.
func appendJSONHeaderAt(dst []byte, c *Command) ([]byte, int) {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	if ext := c.ExtMap(); len(ext) == 0 && len(c.rawExt) > 0 {
		dst = append(dst, `,"extFields":{`...)
		dst = append(dst, c.rawExt...)
		dst = append(dst, '}')
	} else if len(ext) > 0 {
		dst = append(dst, `,"extFields":{`...)
		var stack [16]string
		keys := stack[:0]
		for k := range ext {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSONString(dst, ext[k])
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
	opaqueAt := len(dst)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	if c.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = appendJSONString(dst, c.Remark)
	}
	dst = append(dst, `,"serializeTypeCurrentRPC":"JSON","version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	return append(dst, '}'), opaqueAt
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way fastjson writes it:
// '"' and '\\' escaped, control bytes below 0x20 escaped, everything else
// (non-ASCII included) raw. A byte that is not part of a valid UTF-8
// sequence (a remark can quote request bytes that are not UTF-8) is written
// as U+FFFD, as a Java broker would (its strings are decoded from UTF-8),
// so the output is always UTF-8 as RFC 8259 requires.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// The plain ASCII run at the start (often all of s) is copied at once.
	plain := 0
	for plain < len(s) && s[plain] >= 0x20 && s[plain] < utf8.RuneSelf && s[plain] != '"' && s[plain] != '\\' {
		plain++
	}
	dst = append(dst, s[:plain]...)
	for i := plain; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size - 1
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
