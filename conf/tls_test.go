package conf

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/remoting/tlstest"
)

// Without --tls-cert TLS is off; with it the default mode is permissive;
// --tls-mode and POPSHIM_TLS_MODE choose another; the config loads the
// files and maps --tls-client-auth.
func TestTLSFlags(t *testing.T) {
	m := tlstest.New(t)
	c, err := parse(t, nil, nil)
	require.NoError(t, err)
	require.Equal(t, TLSDisabled, c.TLS.TLSMode())
	cfg, err := c.TLS.ServerConfig()
	require.NoError(t, err)
	require.Nil(t, cfg)

	certs := []string{"--tls-cert=" + m.ServerCertFile, "--tls-key=" + m.ServerKeyFile}
	c, err = parse(t, certs, nil)
	require.NoError(t, err)
	require.Equal(t, TLSPermissive, c.TLS.TLSMode())
	require.Equal(t, TLSPermissive, c.TLS.TLSMode())
	require.Equal(t, DefaultTLSHandshakeTimeout, c.TLS.HandshakeTimeout)
	cfg, err = c.TLS.ServerConfig()
	require.NoError(t, err)
	require.Len(t, cfg.Certificates, 1)
	require.Equal(t, tls.NoClientCert, cfg.ClientAuth)

	c, err = parse(t, append(certs, "--tls-ca="+m.CAFile, "--tls-client-auth=require"),
		map[string]string{"POPSHIM_TLS_MODE": "enforcing"})
	require.NoError(t, err)
	require.Equal(t, TLSEnforcing, c.TLS.TLSMode())
	cfg, err = c.TLS.ServerConfig()
	require.NoError(t, err)
	require.Equal(t, tls.RequireAndVerifyClientCert, cfg.ClientAuth)
	require.NotNil(t, cfg.ClientCAs)

	c, err = parse(t, append(certs, "--tls-mode=disabled"), nil)
	require.NoError(t, err)
	require.Equal(t, TLSDisabled, c.TLS.TLSMode())
}

func TestTLSFlagsInvalid(t *testing.T) {
	m := tlstest.New(t)
	bad := filepath.Join(t.TempDir(), "bad.pem")
	require.NoError(t, os.WriteFile(bad, []byte("not pem"), 0o600))
	certs := []string{"--tls-cert=" + m.ServerCertFile, "--tls-key=" + m.ServerKeyFile}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-mode=strict"}, "--tls-mode: unknown TLS mode"},
		{[]string{"--tls-mode=enforcing"}, "--tls-mode enforcing needs --tls-cert and --tls-key"},
		{[]string{"--tls-cert=" + m.ServerCertFile}, "--tls-cert and --tls-key go together"},
		{append(certs, "--tls-client-auth=require"), "--tls-client-auth require needs --tls-ca"},
		{append(certs, "--tls-client-auth=always"), "--tls-client-auth must be none, optional or require"},
		{append(certs, "--tls-handshake-timeout=0s"), "--tls-handshake-timeout must be > 0"},
		{[]string{"--tls-cert=" + m.ServerCertFile, "--tls-key=" + bad}, "--tls-key"},
		{append(certs, "--tls-ca="+bad), "holds no PEM certificate"},
		{append(certs, "--tls-ca="+bad+".missing"), "--tls-ca"},
	} {
		_, err := parse(t, tc.args, nil)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
}
