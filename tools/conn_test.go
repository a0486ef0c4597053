package tools

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/remoting/tlstest"
	"github.com/popshim/popshim/stack/stacktest"
)

// TestSendConsumeOverTLSWithCredentials: against a broker that refuses
// plaintext (--tls-mode enforcing) and unsigned requests (--auth-enabled),
// send and consume work with --tls-ca and the admin user's keys; without
// TLS, or with a wrong secret, they fail with an error that says so.
func TestSendConsumeOverTLSWithCredentials(t *testing.T) {
	m := tlstest.New(t)
	st := stacktest.StartEdited(t, func(c *conf.Config) {
		c.TLS.Mode, c.TLS.CertFile, c.TLS.KeyFile = "enforcing", m.ServerCertFile, m.ServerKeyFile
		c.AuthEnabled, c.AuthAdminUser, c.AuthAdminPassword = true, "smoke_admin", "smoke-secret-1"
	})
	ns := st.NamesrvAddr()
	ctx := context.Background()
	good := ConnOptions{TLSCA: m.CAFile, AccessKey: "smoke_admin", SecretKey: "smoke-secret-1"}

	sent, err := Send(ctx, SendOptions{Namesrv: ns, Conn: good, Topic: "TlsAuthTopic", Count: 3, Timeout: 20 * time.Second})
	require.NoError(t, err)
	require.Len(t, sent, 3)

	o := NewConsumeOptions()
	o.Namesrv, o.Conn, o.Topic, o.Group, o.Count, o.Timeout = ns, good, "TlsAuthTopic", "tls_auth_g", 3, 20*time.Second
	got, err := Consume(ctx, o)
	require.NoError(t, err)
	require.Len(t, got, 3)

	_, err = Send(ctx, SendOptions{Namesrv: ns, Conn: ConnOptions{AccessKey: "smoke_admin", SecretKey: "smoke-secret-1"},
		Topic: "TlsAuthTopic", Timeout: 5 * time.Second})
	require.Error(t, err, "plaintext against --tls-mode enforcing")

	_, err = Send(ctx, SendOptions{Namesrv: ns, Conn: ConnOptions{TLS: true, AccessKey: "smoke_admin", SecretKey: "wrong"},
		Topic: "TlsAuthTopic", Timeout: 5 * time.Second})
	require.ErrorContains(t, err, "check signature failed")

	_, err = Send(ctx, SendOptions{Namesrv: ns, Conn: ConnOptions{TLS: true}, Topic: "TlsAuthTopic", Timeout: 5 * time.Second})
	require.ErrorContains(t, err, "username cannot be null")
}

// TestConnOptionsErrors: a --tls-ca that is not a PEM file and a
// --secret-key without --access-key are refused before any connection.
func TestConnOptionsErrors(t *testing.T) {
	_, err := ConnOptions{TLSCA: "/nonexistent/ca.pem"}.clientOptions()
	require.ErrorContains(t, err, "--tls-ca")
	_, err = ConnOptions{SecretKey: "s"}.clientOptions()
	require.ErrorContains(t, err, "--secret-key needs --access-key")
}
