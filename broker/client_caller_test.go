package broker_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/clients"
)

// connCaller owns one connection id and answers every call on it with
// its own code.
type connCaller struct {
	conn uint64
	code int32
}

func (c *connCaller) CallClient(call broker.ClientCall, done func(broker.ClientAnswer, error)) bool {
	if call.Channel.ConnID != c.conn {
		return false
	}
	done(broker.ClientAnswer{Code: c.code, Body: call.Body}, nil)
	return true
}

// TestCallClientRouting: a call goes to the caller that owns the
// client's connection; none owning it (or none installed) is false with
// done not called; a removed caller is no longer asked.
func TestCallClientRouting(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	call := func(conn uint64) (broker.ClientAnswer, bool, bool) {
		var got broker.ClientAnswer
		called := false
		ok := f.Broker.CallClient(broker.ClientCall{Code: 307, Channel: clients.ClientChannel{ConnID: conn}, Body: []byte("b")},
			func(a broker.ClientAnswer, err error) { got, called = a, true; assert.NoError(t, err) })
		return got, ok, called
	}
	_, ok, called := call(1)
	assert.False(t, ok || called, "no caller installed")

	removeA := f.Broker.AddClientCaller(&connCaller{conn: 1, code: 11})
	removeB := f.Broker.AddClientCaller(&connCaller{conn: 2, code: 22})
	a, ok, called := call(2)
	assert.True(t, ok && called)
	assert.Equal(t, broker.ClientAnswer{Code: 22, Body: []byte("b")}, a)
	a, ok, _ = call(1)
	assert.True(t, ok)
	assert.Equal(t, int32(11), a.Code)
	_, ok, called = call(3)
	assert.False(t, ok || called, "nobody owns connection 3")

	removeB()
	_, ok, called = call(2)
	assert.False(t, ok || called, "B removed")
	a, ok, _ = call(1)
	assert.True(t, ok)
	assert.Equal(t, int32(11), a.Code, "A still installed")
	removeA()
	_, ok, _ = call(1)
	assert.False(t, ok)
}
