package broker_test

import (
	"testing"

	"github.com/popshim/popshim/broker/brokertest"
)

// SaveState is durable (read back after a restart), an empty value
// clears it, and names do not collide with each other.
func TestSaveStateSurvivesRestart(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	save := func(name string, v []byte) {
		t.Helper()
		if err := brokertest.Await0(t, func(done func(error)) { f.Broker.SaveState(name, v, done) }); err != nil {
			t.Fatalf("SaveState %s: %v", name, err)
		}
	}
	if _, ok, err := f.Broker.State("a"); ok || err != nil {
		t.Fatalf("fresh store: ok=%v err=%v", ok, err)
	}
	save("a", []byte("one"))
	save("b", []byte("two"))
	f.Restart()
	if v, ok, err := f.Broker.State("a"); !ok || err != nil || string(v) != "one" {
		t.Fatalf("after restart: %q %v %v", v, ok, err)
	}
	save("a", nil)
	if _, ok, err := f.Broker.State("a"); ok || err != nil {
		t.Fatalf("cleared: ok=%v err=%v", ok, err)
	}
	if v, ok, _ := f.Broker.State("b"); !ok || string(v) != "two" {
		t.Fatalf("b: %q %v", v, ok)
	}
}
