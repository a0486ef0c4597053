package longpoll

import (
	"errors"
	"strings"

	"github.com/popshim/popshim/codec"
)

// Expression types of a subscription (common/.../filter/ExpressionType.java).
const (
	expTypeTag   = "TAG"
	expTypeSQL92 = "SQL92"
)

// ErrSQL92 marks a subscription popshim cannot evaluate; POP and PULL answer
// REQUEST_CODE_NOT_SUPPORTED (3) naming the expression type.
var ErrSQL92 = errors.New("SQL92 filtering is not supported by popshim, use TAG expressions")

// ErrBadExpType marks an expression type that is neither TAG nor SQL92.
var ErrBadExpType = errors.New("unknown expression type")

// TagFilter decides whether a stored message matches a TAG subscription
// ("*", "" or "a || b || c"), as the broker's ExpressionMessageFilter does
// for tag types, but on the tag string itself rather than its hash: a
// message matches when its TAGS property equals one of the tags. A nil
// *tagFilter matches everything. Immutable after parse, safe to share.
type TagFilter struct {
	tags map[string]struct{}
}

// ParseTagFilter builds the filter of (expType, exp). expType "" means TAG;
// exp "" or "*" means all messages (nil filter). SQL92 returns errSQL92, any
// other type errBadExpType.
func ParseTagFilter(expType, exp string) (*TagFilter, error) {
	switch {
	case expType == "" || strings.EqualFold(expType, expTypeTag):
	case strings.EqualFold(expType, expTypeSQL92):
		return nil, ErrSQL92
	default:
		return nil, ErrBadExpType
	}
	exp = strings.TrimSpace(exp)
	if exp == "" || exp == "*" {
		return nil, nil
	}
	f := &TagFilter{tags: make(map[string]struct{})}
	for _, t := range strings.Split(exp, "||") {
		if t = strings.TrimSpace(t); t != "" {
			f.tags[t] = struct{}{}
		}
	}
	if len(f.tags) == 0 {
		return nil, nil
	}
	return f, nil
}

// MatchProps reports whether a message with the given properties string
// passes the filter.
func (f *TagFilter) MatchProps(props string) bool {
	if f == nil {
		return true
	}
	tag, ok := codec.PropertyValue(props, codec.PropertyTags)
	if !ok {
		return false
	}
	_, hit := f.tags[tag]
	return hit
}
