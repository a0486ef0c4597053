package codec

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrBadAttribute reports that an attribute operation of an
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) body cannot be applied (unknown
// key, bad prefix, duplicate, value out of range, removal of a missing
// key). A Java broker answers such a body with SYSTEM_ERROR and the
// exception text; INVALID_PARAMETER (29) is the more accurate code.
var ErrBadAttribute = errors.New("codec: invalid subscription group attribute")

// groupAttribute is one entry of SubscriptionGroupAttributes.ALL
// (common/.../SubscriptionGroupAttributes.java, common/.../attribute/*Attribute.java).
type groupAttribute struct {
	kind     byte // 'l' long range, 'e' enum, 'b' boolean, 's' string
	min, max int64
	values   []string
}

var groupAttributes = map[string]groupAttribute{
	"priority.factor":                   {kind: 'l', min: 0, max: 100},
	"lite.bind.topic":                   {kind: 's'},
	"lite.sub.model":                    {kind: 'e', values: []string{"Shared", "Exclusive"}},
	"lite.sub.reset.offset.exclusive":   {kind: 'b'},
	"lite.sub.reset.offset.unsubscribe": {kind: 'b'},
	"lite.sub.client.quota":             {kind: 'l', min: -1, max: math.MaxInt64},
	"lite.sub.client.max.event.cnt":     {kind: 'l', min: 10, max: math.MaxInt64},
	"lite.sub.wildcard":                 {kind: 's'},
}

func (a groupAttribute) verify(key, value string) error {
	switch a.kind {
	case 'l':
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < a.min || n > a.max {
			return fmt.Errorf("%w: %s=%q is not an integer in [%d, %d]", ErrBadAttribute, key, value, a.min, a.max)
		}
	case 'e':
		if !slices.Contains(a.values, value) {
			return fmt.Errorf("%w: %s=%q is not one of %v", ErrBadAttribute, key, value, a.values)
		}
	case 'b':
		if !strings.EqualFold(value, "true") && !strings.EqualFold(value, "false") {
			return fmt.Errorf("%w: %s=%q is not a boolean", ErrBadAttribute, key, value)
		}
	}
	return nil
}

// ApplySubscriptionGroupAttributes computes the attributes to store for
// an UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) body, following
// common/.../attribute/AttributeUtil.alterCurrentAttributes. In a 200 body
// every key of ops carries an operator: "+key" sets key to the value,
// "-key" removes key (value ignored). current holds the stored (plain)
// keys of the group, nil when it does not exist yet; create is true then,
// and only "+" is allowed. Each key must be a known group attribute
// (priority.factor, lite.*) and each set value must pass its type check.
// The result is a new map (never nil); current and ops are not modified.
// Errors wrap ErrBadAttribute. Any goroutine.
func ApplySubscriptionGroupAttributes(current, ops map[string]string, create bool) (map[string]string, error) {
	out := maps.Clone(current)
	if out == nil {
		out = make(map[string]string, len(ops))
	}
	seen := make(map[string]bool, len(ops))
	// Sorted so that the reported error does not depend on map order.
	for _, key := range slices.Sorted(maps.Keys(ops)) {
		if key == "" {
			return nil, fmt.Errorf("%w: empty key", ErrBadAttribute)
		}
		op, name := key[0], key[1:]
		if name == "" || strings.ContainsAny(name, "+-") {
			return nil, fmt.Errorf("%w: key %q is malformed", ErrBadAttribute, key)
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: key %q given twice", ErrBadAttribute, name)
		}
		seen[name] = true
		attr, known := groupAttributes[name]
		switch {
		case op != '+' && op != '-':
			return nil, fmt.Errorf("%w: key %q has no +/- operator", ErrBadAttribute, key)
		case create && op == '-':
			return nil, fmt.Errorf("%w: only + is allowed when creating a group, got %q", ErrBadAttribute, key)
		case op == '-' && !hasKey(current, name):
			return nil, fmt.Errorf("%w: cannot remove missing key %q", ErrBadAttribute, name)
		case !known:
			return nil, fmt.Errorf("%w: unsupported key %q", ErrBadAttribute, name)
		}
		if op == '-' {
			delete(out, name)
			continue
		}
		if err := attr.verify(name, ops[key]); err != nil {
			return nil, err
		}
		out[name] = ops[key]
	}
	return out, nil
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
