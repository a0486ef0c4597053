package codec

import (
	"strconv"
	"strings"
)

// extReader decodes typed fields out of a Command's ExtFields with a sticky
// error: every accessor returns a zero value once a field has failed, and
// Err reports the first failure as a *FieldError. It never allocates unless a
// field is bad; returned strings are the map's own values (no copy).
//
// Numbers are parsed like Java's Integer.parseInt / Long.parseLong (optional
// leading sign, decimal digits, range checked). Booleans follow
// Boolean.parseBoolean: case-insensitive "true" is true, anything else false.
type extReader struct {
	ext   map[string]string
	typed *typedExt // when set, the fields come from these slots, not ext
	err   error
}

// get returns the field key and whether it is present.
func (r *extReader) get(key string) (string, bool) {
	if r.typed != nil {
		return r.typed.get(key)
	}
	v, ok := r.ext[key]
	return v, ok
}

func (r *extReader) fail(field, value string, cause error) {
	if r.err == nil {
		r.err = &FieldError{Field: field, Value: value, Err: cause}
	}
}

// Err returns the first field error, or nil.
func (r *extReader) Err() error { return r.err }

func (r *extReader) lookup(key string, required bool) (string, bool) {
	v, ok := r.get(key)
	if !ok && required {
		r.fail(key, "", ErrMissingField)
	}
	return v, ok
}

// str returns a required string; an empty value counts as present (JSON
// keeps "" while the ROCKETMQ header already turned it into an absent key).
func (r *extReader) str(key string) string {
	v, _ := r.lookup(key, true)
	return v
}

// optStr returns an optional string or "".
func (r *extReader) optStr(key string) string { v, _ := r.get(key); return v }

func (r *extReader) int64Field(key string, required bool, def int64) (int64, bool) {
	v, ok := r.lookup(key, required)
	if !ok {
		return def, false
	}
	n, ok := parseDecimal(v, 64)
	if !ok {
		r.fail(key, v, ErrInvalidField)
		return def, false
	}
	return n, true
}

func (r *extReader) int32Field(key string, required bool, def int32) (int32, bool) {
	v, ok := r.lookup(key, required)
	if !ok {
		return def, false
	}
	n, ok := parseDecimal(v, 32)
	if !ok {
		r.fail(key, v, ErrInvalidField)
		return def, false
	}
	return int32(n), true
}

// i64 returns a required int64.
func (r *extReader) i64(key string) int64 { n, _ := r.int64Field(key, true, 0); return n }

// i32 returns a required int32.
func (r *extReader) i32(key string) int32 { n, _ := r.int32Field(key, true, 0); return n }

// optI64 returns an optional int64 or def when absent; a present but
// unparsable value is still an error.
func (r *extReader) optI64(key string, def int64) int64 {
	n, _ := r.int64Field(key, false, def)
	return n
}

// optI32 is optI64 for int32.
func (r *extReader) optI32(key string, def int32) int32 {
	n, _ := r.int32Field(key, false, def)
	return n
}

// optI32Has is optI32 that also reports presence.
func (r *extReader) optI32Has(key string) (int32, bool) { return r.int32Field(key, false, 0) }

// optBool returns def when absent, else Java's Boolean.parseBoolean(value).
func (r *extReader) optBool(key string, def bool) bool {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	return strings.EqualFold(v, "true")
}

// extWriter sets typed fields on a Command's ExtFields, formatting them the
// way Java's makeCustomHeaderToNet does (decimal numbers, "true"/"false").
type extWriter struct{ c *Command }

func (w extWriter) str(key, v string) { w.c.SetExt(key, v) }

// optStr sets key only when v is non-empty (a null Java field is omitted).
func (w extWriter) optStr(key, v string) {
	if v != "" {
		w.c.SetExt(key, v)
	}
}
func (w extWriter) i64(key string, v int64) { w.c.SetExt(key, strconv.FormatInt(v, 10)) }
func (w extWriter) i32(key string, v int32) { w.c.SetExt(key, strconv.FormatInt(int64(v), 10)) }
func (w extWriter) boolean(key string, v bool) {
	if v {
		w.c.SetExt(key, "true")
	} else {
		w.c.SetExt(key, "false")
	}
}
