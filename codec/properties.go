package codec

import (
	"fmt"
	"iter"
	"slices"
	"strings"
)

// The properties string (MessageDecoder.messageProperties2String /
// string2messageProperties) is a sequence of name 0x01 value 0x02 pairs,
// every pair terminated by 0x02. Order carries no meaning. Readers here follow
// the Java rules: pairs are cut at 0x02 (a final unterminated pair still
// counts), the name/value split is the first 0x01, and pairs with an empty
// name or an empty value are ignored. Where a name repeats, the last pair
// wins. Names and values cannot contain 0x01 or 0x02.
//
// popshim keeps a stored message's properties as the raw string it received
// (MessageExt.Properties), so re-encoding a decoded record gives the same
// bytes; the functions below read and edit that string without building a
// map. DecodeProperties / AppendProperties convert to and from a map, with
// keys sorted on output so the encoding is deterministic.

// ErrInvalidProperty reports that a property name or value cannot be encoded.
var ErrInvalidProperty = fmt.Errorf("codec: invalid message property")

// propertyPairs calls fn for each valid pair of s, in order, until fn
// returns false. It does not allocate; k and v alias s.
func propertyPairs(s string, fn func(k, v string) bool) {
	for len(s) > 0 {
		seg := s
		if i := strings.IndexByte(s, PropertySeparator); i >= 0 {
			seg, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if len(seg) < 3 {
			continue
		}
		kv := strings.IndexByte(seg, PropertyNameValueSeparator)
		if kv <= 0 || kv >= len(seg)-1 {
			continue
		}
		if !fn(seg[:kv], seg[kv+1:]) {
			return
		}
	}
}

// Properties yields the valid pairs of the properties string s in order,
// by the rules above; a repeated name is yielded once per pair, so a
// reader that keeps the last value of each name sees what DecodeProperties
// returns. Names and values alias s; iterating allocates nothing.
func Properties(s string) iter.Seq2[string, string] {
	return func(yield func(k, v string) bool) { propertyPairs(s, yield) }
}

// PropertyValue returns the value of key in the properties string props and
// whether it is present. It does not allocate; the value aliases props.
func PropertyValue(props, key string) (string, bool) {
	var val string
	var found bool
	propertyPairs(props, func(k, v string) bool {
		if k == key {
			val, found = v, true
		}
		return true
	})
	return val, found
}

// DecodeProperties parses a properties string into a new map. An empty
// string gives an empty, non-nil map. Keys and values are substrings of s
// (no copy).
func DecodeProperties(s string) map[string]string {
	m := make(map[string]string, strings.Count(s, string(PropertySeparator))+1)
	propertyPairs(s, func(k, v string) bool {
		m[k] = v
		return true
	})
	return m
}

func checkProperty(k, v string) error {
	if k == "" || strings.ContainsAny(k, "\x01\x02") || strings.ContainsAny(v, "\x01\x02") {
		return fmt.Errorf("%w: %q=%q", ErrInvalidProperty, k, v)
	}
	return nil
}

// AppendProperties appends the properties string of m to dst, keys in
// ascending byte order, and returns the extended slice. Pairs with an empty
// value are skipped (Java would drop them when reading). It returns an error
// wrapping ErrInvalidProperty, and dst unchanged, when a key is empty or a
// key or value contains 0x01 or 0x02.
func AppendProperties(dst []byte, m map[string]string) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if err := checkProperty(k, v); err != nil {
			return dst, err
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v := m[k]; v != "" {
			dst = appendPropertyPair(dst, k, v)
		}
	}
	return dst, nil
}

// EncodeProperties is AppendProperties into a new string.
func EncodeProperties(m map[string]string) (string, error) {
	b, err := AppendProperties(nil, m)
	return string(b), err
}

func appendPropertyPair(dst []byte, k, v string) []byte {
	dst = append(dst, k...)
	dst = append(dst, PropertyNameValueSeparator)
	dst = append(dst, v...)
	return append(dst, PropertySeparator)
}

// DeleteProperty returns props without any pair named key, keeping the
// order of the others. props itself is returned (no allocation) when key is
// absent. Invalid segments are dropped from a rewritten string.
func DeleteProperty(props, key string) string {
	if _, ok := PropertyValue(props, key); !ok {
		return props
	}
	out := make([]byte, 0, len(props))
	propertyPairs(props, func(k, v string) bool {
		if k != key {
			out = appendPropertyPair(out, k, v)
		}
		return true
	})
	return string(out)
}

// SetProperty returns props with key set to value: any existing pair named
// key is removed and the new pair is appended at the end. It returns an
// error wrapping ErrInvalidProperty for an empty key or value or one holding
// a separator.
func SetProperty(props, key, value string) (string, error) {
	if err := checkProperty(key, value); err != nil {
		return props, err
	}
	if value == "" {
		return props, fmt.Errorf("%w: empty value for %q", ErrInvalidProperty, key)
	}
	props = DeleteProperty(props, key)
	if len(props) > 0 && props[len(props)-1] != PropertySeparator {
		props += string(PropertySeparator)
	}
	return props + key + string(PropertyNameValueSeparator) + value + string(PropertySeparator), nil
}
