package longpoll

import (
	"errors"
	"strings"

	"github.com/popshim/popshim/broker/filter"
	"github.com/popshim/popshim/codec"
)

// Expression types of a subscription (common/.../filter/ExpressionType.java).
const (
	expTypeTag   = "TAG"
	expTypeSQL92 = "SQL92"
)

// ErrSQL92 marks an SQL92 subscription given to ParseTagFilter: the caller
// decides whether SQL92 is served (--enable-property-filter) and compiles
// it (broker/filter, then SQLFilter).
var ErrSQL92 = errors.New("an SQL92 subscription is not a TAG expression")

// ErrBadExpType marks an expression type that is neither TAG nor SQL92.
var ErrBadExpType = errors.New("unknown expression type")

// IsSQL92 reports whether expType names the SQL92 expression type (any
// ASCII case, as ParseTagFilter accepts it).
func IsSQL92(expType string) bool { return strings.EqualFold(expType, expTypeSQL92) }

// Filter decides whether a stored message matches a subscription. A TAG
// subscription ("*", "" or "a || b || c") matches, as the broker's
// ExpressionMessageFilter does for tag types but on the tag string itself
// rather than its hash, a message whose TAGS property equals one of the
// tags; an SQL92 subscription matches a message whose properties its
// selector evaluates to TRUE (broker/filter). A nil *Filter matches
// everything. Immutable after construction, safe to share.
type Filter struct {
	tags map[string]struct{} // TAG
	sql  *filter.Expr        // SQL92; tags nil
}

// ParseTagFilter builds the filter of a TAG subscription (expType, exp).
// expType "" means TAG; exp "" or "*" means all messages (nil filter).
// SQL92 returns ErrSQL92, any other type ErrBadExpType.
func ParseTagFilter(expType, exp string) (*Filter, error) {
	switch {
	case expType == "" || strings.EqualFold(expType, expTypeTag):
	case IsSQL92(expType):
		return nil, ErrSQL92
	default:
		return nil, ErrBadExpType
	}
	exp = strings.TrimSpace(exp)
	if exp == "" || exp == "*" {
		return nil, nil
	}
	f := &Filter{tags: make(map[string]struct{})}
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

// SQLFilter is the filter of an SQL92 subscription compiled to e.
func SQLFilter(e *filter.Expr) *Filter { return &Filter{sql: e} }

// IsSQL reports an SQL92 filter (its wake-up probes read properties, not
// only tags); false for nil.
func (f *Filter) IsSQL() bool { return f != nil && f.sql != nil }

// MatchProps reports whether a message with the given properties string
// passes the filter.
func (f *Filter) MatchProps(props string) bool {
	if f == nil {
		return true
	}
	if f.sql != nil {
		return f.sql.Match(props)
	}
	tag, ok := codec.PropertyValue(props, codec.PropertyTags)
	if !ok {
		return false
	}
	_, hit := f.tags[tag]
	return hit
}

// matchesPending reports whether a POP with filter f would take the
// pending message t: a TAG filter looks at its tag, an SQL92 filter at its
// properties (read when the probe was asked for them; a message read
// without them matches no SQL92 filter).
func (f *Filter) matchesPending(t PendingTag) bool {
	switch {
	case f == nil:
		return true
	case f.sql != nil:
		return t.HasProps && f.sql.Match(t.Props)
	case !t.HasTag:
		return false
	}
	_, hit := f.tags[t.Tag]
	return hit
}
