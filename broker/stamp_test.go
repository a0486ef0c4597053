package broker

import (
	"maps"
	"testing"

	"github.com/popshim/popshim/codec"
)

// stampProperties' one-append fast path gives the properties the three
// SetProperty calls give, for inputs with and without a trailing
// separator, and with the names already present (the slow path).
func TestStampPropertiesMatchesSetProperty(t *testing.T) {
	b := &Broker{Settings: &Settings{ClusterName: "C1", RegionID: "R1", TraceOn: true}}
	for _, props := range []string{
		"", "TAGS\x01a\x02", "TAGS\x01a", "KEYS\x01k1 k2\x02UNIQ_KEY\x01U\x02",
		"CLUSTER\x01old\x02TAGS\x01a\x02", "MSG_REGION\x01x\x02", "TRACE_ON\x01false\x02WAIT\x01true\x02",
	} {
		got, err := b.stampProperties(props)
		if err != nil {
			t.Fatal(err)
		}
		want := props
		for _, kv := range [][2]string{{codec.PropertyCluster, "C1"}, {codec.PropertyMsgRegion, "R1"}, {codec.PropertyTraceSwitch, "true"}} {
			if want, err = codec.SetProperty(want, kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		if g, w := codec.DecodeProperties(got), codec.DecodeProperties(want); !maps.Equal(g, w) {
			t.Errorf("stampProperties(%q) = %q (%v), want %v", props, got, g, w)
		}
	}
}
