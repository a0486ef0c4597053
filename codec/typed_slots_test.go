package codec

import "testing"

// TestSlotTables: every key of a table maps to its own slot, the keys are
// sorted (AppendFields relies on it) and other keys have none.
func TestSlotTables(t *testing.T) {
	for _, tab := range []*fieldTable{&ackFields, &sendV2Fields} {
		x := typedExt{tab: tab}
		for i, k := range tab.keys {
			if got := x.slot(k); got != i {
				t.Fatalf("%q: slot %d want %d", k, got, i)
			}
			if i > 0 && tab.keys[i-1] >= k {
				t.Fatalf("keys not sorted at %q", k)
			}
		}
		for _, k := range []string{"", "o", "z", "A", "aa", "nsx", "topicx"} {
			if x.slot(k) >= 0 {
				t.Fatalf("%q has a slot", k)
			}
		}
	}
}
