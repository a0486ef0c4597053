package conf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
)

// TLS is the TLS setting of both remoting listeners (broker and embedded
// name server), after Java's TlsSystemConfig (tls.server.*). Without
// CertFile and KeyFile TLS is off and every connection is plaintext, as
// before TLS support; with them the default mode is permissive.
type TLS struct {
	// Mode is tls.server.mode: disabled, permissive (TLS and plaintext on
	// one port, told apart by the first byte) or enforcing (plaintext
	// clients are closed). Empty: permissive when CertFile is set, else
	// disabled. --tls-mode.
	Mode string
	// CertFile is the PEM certificate chain the listeners present
	// (tls.server.certPath). --tls-cert.
	CertFile string
	// KeyFile is the PEM private key of CertFile, unencrypted PKCS#1,
	// PKCS#8 or EC (tls.server.keyPath). --tls-key.
	KeyFile string
	// CAFile is a PEM bundle of CAs that client certificates must chain to
	// (tls.server.trustCertPath). Needed by ClientAuth optional and
	// require. --tls-ca.
	CAFile string
	// ClientAuth is tls.server.need.client.auth: none (no certificate is
	// asked for), optional (a certificate, when sent, must verify against
	// CAFile) or require (a verified certificate is needed). Default none.
	// --tls-client-auth.
	ClientAuth string
	// HandshakeTimeout bounds a TLS handshake; a slower client is closed.
	// Default 10s (Netty SslHandler). --tls-handshake-timeout.
	HandshakeTimeout time.Duration
}

// bindTLSFlags registers the --tls-* flags. Called by BindFlags.
func (c *Config) bindTLSFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.TLS.Mode, "tls-mode", c.TLS.Mode, "TLS on the broker and name-server ports (tls.server.mode): disabled | permissive (TLS and plaintext on one port) | enforcing (TLS only); empty = permissive with --tls-cert, else disabled")
	fs.StringVar(&c.TLS.CertFile, "tls-cert", c.TLS.CertFile, "PEM certificate chain of the listeners (tls.server.certPath); with --tls-key turns TLS on")
	fs.StringVar(&c.TLS.KeyFile, "tls-key", c.TLS.KeyFile, "PEM private key of --tls-cert, unencrypted (tls.server.keyPath)")
	fs.StringVar(&c.TLS.CAFile, "tls-ca", c.TLS.CAFile, "PEM CA bundle client certificates are verified against (tls.server.trustCertPath)")
	fs.StringVar(&c.TLS.ClientAuth, "tls-client-auth", c.TLS.ClientAuth, "client certificates (tls.server.need.client.auth): none | optional (verified when sent) | require; optional and require need --tls-ca")
	fs.DurationVar(&c.TLS.HandshakeTimeout, "tls-handshake-timeout", c.TLS.HandshakeTimeout, "close a client whose TLS handshake takes longer")
}

// TLSMode is Java's tls.server.mode for a listener (remoting and gRPC).
type TLSMode uint8

const (
	// TLSDisabled serves plaintext only.
	TLSDisabled TLSMode = iota
	// TLSPermissive serves TLS and plaintext clients on one port (told
	// apart by the first byte, 0x16 for a TLS handshake).
	TLSPermissive
	// TLSEnforcing serves TLS clients only.
	TLSEnforcing
)

// String is the Java spelling: "disabled", "permissive", "enforcing".
func (m TLSMode) String() string {
	switch m {
	case TLSPermissive:
		return "permissive"
	case TLSEnforcing:
		return "enforcing"
	}
	return "disabled"
}

// ParseTLSMode reads a mode in Java's spelling (disabled, permissive,
// enforcing). Any other string is an error naming the accepted values.
func ParseTLSMode(s string) (TLSMode, error) {
	switch s {
	case "disabled":
		return TLSDisabled, nil
	case "permissive":
		return TLSPermissive, nil
	case "enforcing":
		return TLSEnforcing, nil
	}
	return TLSDisabled, fmt.Errorf("unknown TLS mode %q: want disabled, permissive or enforcing", s)
}

// TLSMode is the effective mode: Mode, or permissive when Mode is empty
// and a certificate is set, else disabled. An unknown Mode is reported by
// Validate; here it reads as disabled.
func (t TLS) TLSMode() TLSMode {
	if t.Mode == "" {
		if t.CertFile != "" {
			return TLSPermissive
		}
		return TLSDisabled
	}
	m, _ := ParseTLSMode(t.Mode)
	return m
}

// ServerConfig loads the certificate, key and CA bundle and returns the
// server TLS config (TLS 1.2 or newer), or nil when TLS is disabled.
// Errors name the flag and file at fault. Reads only the files named by
// the flags.
func (t TLS) ServerConfig() (*tls.Config, error) {
	if t.TLSMode() == TLSDisabled {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %q / --tls-key %q: %w", t.CertFile, t.KeyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		cfg.ClientCAs = x509.NewCertPool()
		if !cfg.ClientCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %q holds no PEM certificate", t.CAFile)
		}
	}
	switch t.ClientAuth {
	case "", "none":
		cfg.ClientAuth = tls.NoClientCert
	case "optional":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "require":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// validateTLS checks the --tls-* flags together and loads the files, so a
// bad path or key fails at start with the flag named.
func (c *Config) validateTLS(v *validator) {
	t := c.TLS
	if t.Mode != "" {
		if _, err := ParseTLSMode(t.Mode); err != nil {
			v.errf("--tls-mode: %v", err)
			return
		}
	}
	switch t.ClientAuth {
	case "", "none", "optional", "require":
	default:
		v.errf("--tls-client-auth must be none, optional or require, got %q", t.ClientAuth)
		return
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		v.errf("--tls-cert and --tls-key go together")
		return
	}
	on := t.TLSMode() != TLSDisabled
	switch {
	case on && t.CertFile == "":
		v.errf("--tls-mode %s needs --tls-cert and --tls-key", t.Mode)
		return
	case (t.ClientAuth == "optional" || t.ClientAuth == "require") && t.CAFile == "":
		v.errf("--tls-client-auth %s needs --tls-ca", t.ClientAuth)
		return
	case t.HandshakeTimeout <= 0:
		v.errf("--tls-handshake-timeout must be > 0, got %s", t.HandshakeTimeout)
		return
	}
	if !on {
		return
	}
	if _, err := t.ServerConfig(); err != nil {
		v.errf("%v", err)
	}
}
