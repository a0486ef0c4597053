package grpcserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/popshim/popshim/codec"
)

// propList collects the properties of one message SendInputOf converts, in
// the order they are set; encode turns them into the stored properties
// string. It replaces a map[string]string plus codec.EncodeProperties with
// the same result: one slice instead of a map per message, and the string
// built at its final size.
type propList []propPair

// propPair is one property name and value.
type propPair struct{ k, v string }

// set adds property k = v; a later set of the same k replaces it.
func (p *propList) set(k, v string) { *p = append(*p, propPair{k, v}) }

// encode returns the properties string of p exactly as
// codec.EncodeProperties returns it for a map holding p's final values:
// names in ascending byte order, pairs with an empty value left out.
// Errors wrap codec.ErrInvalidProperty: an empty name, or 0x01 or 0x02 in
// a name or value. p is sorted in place.
func (p propList) encode() (string, error) {
	slices.SortStableFunc(p, func(a, b propPair) int { return strings.Compare(a.k, b.k) })
	n := 0
	for i, e := range p {
		if e.k == "" || hasSeparator(e.k) || hasSeparator(e.v) {
			return "", fmt.Errorf("%w: %q=%q", codec.ErrInvalidProperty, e.k, e.v)
		}
		if p.kept(i) {
			n += len(e.k) + len(e.v) + 2
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i, e := range p {
		if p.kept(i) {
			b.WriteString(e.k)
			b.WriteByte(codec.PropertyNameValueSeparator)
			b.WriteString(e.v)
			b.WriteByte(codec.PropertySeparator)
		}
	}
	return b.String(), nil
}

// kept reports whether sorted pair i is stored: the last set of its name,
// with a value.
func (p propList) kept(i int) bool {
	return p[i].v != "" && (i+1 == len(p) || p[i+1].k != p[i].k)
}
