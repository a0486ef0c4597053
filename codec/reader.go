package codec

import (
	"encoding/binary"
	"fmt"
)

// reader decodes big-endian binary structures with a sticky error: field
// methods never return errors; the first short read marks the reader bad,
// every later read yields zero values, and complete reports the failure
// once. Slices returned by span alias the input with their capacity clipped,
// so appending to them can never overwrite the bytes that follow.
type reader struct {
	b    []byte
	off  int
	bad  bool
	what string // field that ran short or was invalid, for the error
	at   int    // its offset
	inv  bool   // set by fail: a value, not a length, was wrong
}

func (r *reader) need(n int, what string) bool {
	if r.bad {
		return false
	}
	if n < 0 || n > len(r.b)-r.off {
		r.bad, r.what, r.at = true, what, r.off
		return false
	}
	return true
}

// fail marks the reader bad at the current offset (for semantic checks).
func (r *reader) fail(what string) {
	if !r.bad {
		r.bad, r.what, r.at, r.inv = true, what, r.off, true
	}
}

func (r *reader) u8(what string) uint8 {
	if !r.need(1, what) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) i16(what string) int16 {
	if !r.need(2, what) {
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.b[r.off:]))
	r.off += 2
	return v
}

func (r *reader) i32(what string) int32 {
	if !r.need(4, what) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b[r.off:]))
	r.off += 4
	return v
}

func (r *reader) i64(what string) int64 {
	if !r.need(8, what) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b[r.off:]))
	r.off += 8
	return v
}

// span returns the next n bytes, aliasing the input with capacity clipped.
// A negative n or one beyond the end marks the reader bad.
func (r *reader) span(n int, what string) []byte {
	if !r.need(n, what) {
		return nil
	}
	s := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return s
}

func (r *reader) remaining() int { return len(r.b) - r.off }

// complete returns nil when every read succeeded, else an error that names
// the field and its offset, wrapping ErrShort for a short read.
func (r *reader) complete() error {
	if !r.bad {
		return nil
	}
	if r.inv {
		return fmt.Errorf("invalid %s before offset %d of %d bytes", r.what, r.at, len(r.b))
	}
	return fmt.Errorf("%w: %s at offset %d of %d bytes", ErrShort, r.what, r.at, len(r.b))
}
