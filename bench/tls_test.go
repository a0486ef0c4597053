package bench

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/remoting/tlstest"
	"github.com/popshim/popshim/stack/stacktest"
)

// --tls: the ACK workload runs over TLS against a popshim that enforces
// TLS with a self-signed certificate (so a plaintext bench could not even
// prepare), and every ACK succeeds once.
func TestRunAckOverTLS(t *testing.T) {
	m := tlstest.New(t)
	st := stacktest.StartEdited(t, func(c *conf.Config) {
		c.TLS = conf.TLS{Mode: "enforcing", CertFile: m.ServerCertFile, KeyFile: m.ServerKeyFile, HandshakeTimeout: 10 * time.Second}
	})
	var out bytes.Buffer
	o := Options{Addr: st.BrokerAddr(), Messages: 1000, Conns: 2, Inflight: 8, Duration: 30 * time.Second,
		Interval: 200 * time.Millisecond, Rate: 3000, Label: "tls", Out: &out, CreateTopic: true, TLS: true}
	r, err := RunAck(context.Background(), o)
	require.NoError(t, err, out.String())
	require.True(t, r.Exhausted)
	ack, _ := r.SeriesByName("ack")
	require.EqualValues(t, 1000, ack.OK, "each ACK handle acked once: %+v", ack)
	require.Zero(t, ack.Busy+ack.Errors)
	require.Equal(t, true, r.Config["tls"])

	o.TLS, o.Label = false, "plain"
	_, err = RunAck(context.Background(), o)
	require.Error(t, err, "enforcing refuses the plaintext bench")
}
