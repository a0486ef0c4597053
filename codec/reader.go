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
	what string // field that ran short, for the error
	at   int    // its offset
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

// complete returns nil when every read succeeded, else an error wrapping
// ErrShort that names the field and its offset.
func (r *reader) complete() error {
	if !r.bad {
		return nil
	}
	return fmt.Errorf("%w: %s at offset %d of %d bytes", ErrShort, r.what, r.at, len(r.b))
}
