package codec

import (
	"errors"
	"fmt"
)

// Sentinel errors of the codec. Callers match them with errors.Is; the
// returned errors wrap them with offsets and the offending values.
var (
	// ErrFrameTooLarge: the length prefix exceeds the configured maximum frame.
	ErrFrameTooLarge = errors.New("codec: frame too large")
	// ErrBadFrame: a length inside the frame does not fit the bytes that are left.
	ErrBadFrame = errors.New("codec: malformed frame")
	// ErrBadHeader: the header bytes cannot be decoded.
	ErrBadHeader = errors.New("codec: malformed header")
	// ErrMissingField: a required ext field is absent.
	ErrMissingField = errors.New("codec: missing header field")
	// ErrInvalidField: an ext field, or a member of a JSON body (HEART_BEAT,
	// BATCH_ACK, route), is present but cannot be parsed.
	ErrInvalidField = errors.New("codec: invalid field")
	// ErrShort: a binary structure ended before all its fields were read.
	ErrShort = errors.New("codec: short input")
)

// FieldError names the ext field a typed header could not decode. It wraps
// ErrMissingField or ErrInvalidField. Handlers put Error() into the remark.
type FieldError struct {
	Field string
	Value string
	Err   error
}

// Error returns a remark-ready text in the words a Java broker uses
// ("the custom field <x> is null" / "... is invalid").
func (e *FieldError) Error() string {
	if errors.Is(e.Err, ErrMissingField) {
		return fmt.Sprintf("the custom field <%s> is null", e.Field)
	}
	return fmt.Sprintf("the custom field <%s> is invalid: %q", e.Field, e.Value)
}

// Unwrap returns ErrMissingField or ErrInvalidField.
func (e *FieldError) Unwrap() error { return e.Err }
