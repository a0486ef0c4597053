package handler_test

import (
	"testing"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler"
	"github.com/popshim/popshim/remoting"
)

// TestRegisteredCodesNamed walks both registration tables and fails when a
// registered request code has no Java RequestCode name: such a code would be
// labelled by number in rocketmq_rpc_latency and by UNKNOWN_<n> in logs.
func TestRegisteredCodesNamed(t *testing.T) {
	n := 0
	for _, reg := range []func(*remoting.Router, *handler.Broker){handler.RegisterBroker, handler.RegisterNameServer} {
		r := remoting.NewRouter()
		reg(r, nil) // method values on a nil *handler.Broker are never called here
		for _, c := range r.Codes() {
			n++
			if _, ok := codec.LookupRequestName(c); !ok {
				t.Errorf("registered request code %d has no name in codec", c)
			}
		}
	}
	if n < 40 {
		t.Fatalf("walked only %d registered codes", n)
	}
}
