package grpcserver

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/popshim/popshim/codec"
)

// propList.encode gives codec.EncodeProperties' string for the map of the
// same sets (a later set of a name wins, empty values left out), and its
// error for a separator.
func TestPropListEncodesAsMap(t *testing.T) {
	names := []string{"a", "b", "TAGS", "KEYS", "UNIQ_KEY", "zz", "k1", "k10", "k2"}
	values := []string{"", "1", "x y", "ünï", "TagA"}
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 500; round++ {
		var p propList
		m := map[string]string{}
		for range r.IntN(12) {
			k, v := names[r.IntN(len(names))], values[r.IntN(len(values))]
			p.set(k, v)
			m[k] = v
		}
		want, err := codec.EncodeProperties(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.encode()
		if err != nil || got != want {
			t.Fatalf("round %d: %q %v, want %q", round, got, err, want)
		}
	}
	for _, bad := range []propList{{{"", "v"}}, {{"a\x01", "v"}}, {{"a", "v\x02"}}} {
		if _, err := bad.encode(); !errors.Is(err, codec.ErrInvalidProperty) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
