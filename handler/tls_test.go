package handler_test

import (
	"context"
	"crypto/tls"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/remoting"
	"github.com/popshim/popshim/remoting/tlstest"
)

// dialTLSAddr connects a TLS remoting client to addr, closed at test end.
func dialTLSAddr(t *testing.T, addr string, cfg *tls.Config) *client.Conn {
	t.Helper()
	c, err := client.DialContext(context.Background(), addr, client.Options{TLS: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// --tls-cert/--tls-key with --tls-mode=enforcing: both ports speak TLS
// only. Over TLS the name server answers a route, and SEND, POP and ACK
// reach the group-commit writer and answer SUCCESS; a plaintext client of
// either port gets no answer.
func TestServeTLSEnforcingBothPorts(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		// gnet's package-level worker pool, used to enroll the plaintext
		// side of each TLS session; idle workers linger up to 10 s.
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"))
	m := tlstest.New(t)
	h := startHarness(t, func(cfg *conf.Config) {
		cfg.NamesrvListen = "127.0.0.1:0"
		cfg.TLS = conf.TLS{Mode: "enforcing", CertFile: m.ServerCertFile, KeyFile: m.ServerKeyFile,
			CAFile: m.CAFile, ClientAuth: "optional", HandshakeTimeout: remoting.DefaultTLSHandshakeTimeout}
	})
	defer h.stop()
	st := h.st
	h.createTopic("TT", 1)

	ns := dialTLSAddr(t, st.NamesrvAddr(), m.ClientConfig(false))
	resp := d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "TT"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)

	c := dialTLSAddr(t, st.BrokerAddr(), m.ClientConfig(true))
	send(t, c, "TT", 0, "over tls", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "TT", queueID: 0, max: 1, invisible: 60000})
	require.Len(t, ms, 1)
	require.Equal(t, "over tls", ms[0].body())
	require.Equal(t, codec.Success, ack(t, c, "G", "TT", ms[0]))

	for _, addr := range []string{st.BrokerAddr(), st.NamesrvAddr()} {
		pc, err := client.Dial(addr)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		_, err = pc.Invoke(ctx, codec.NewRequest(codec.RequestGetBrokerRuntimeInfo, 0, nil, nil))
		cancel()
		require.Error(t, err, "a plaintext client of %s must be refused under enforcing", addr)
		require.NoError(t, pc.Close())
	}
}
