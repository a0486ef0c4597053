package grpcserver

import (
	"context"
	"strings"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/remoting/logtest"
)

// Each TLS mode on real loopback connections: permissive serves plaintext
// and TLS on one port, enforcing only TLS, disabled only plaintext.
// Each mode serves what it should; a connection refused for speaking the
// wrong protocol leaves a warn line naming --tls-mode.
func TestTLSModes(t *testing.T) {
	cert := selfSigned(t)
	cases := []struct {
		mode             TLSMode
		plainOK, tlsOK   bool
		wantTLSInfoOnTLS bool
	}{
		{TLSDisabled, true, false, false},
		{TLSPermissive, true, true, true},
		{TLSEnforcing, false, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.mode.String(), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.TLSMode = tc.mode
			if tc.mode != TLSDisabled {
				cfg.TLSConfig = cert
			}
			logs := &logtest.Buffer{}
			lg := zerolog.New(logs)
			cfg.Logger = &lg
			_, addr := startServer(t, cfg)
			for _, useTLS := range []bool{false, true} {
				want := tc.plainOK
				if useTLS {
					want = tc.tlsOK
				}
				c := dial(t, addr, useTLS)
				ctx, cancel := context.WithTimeout(withClient(context.Background(), "tls@1"), callBound)
				r, err := c.NotifyClientTermination(ctx, &v2.NotifyClientTerminationRequest{})
				cancel()
				if want && (err != nil || r.GetStatus().GetCode() != v2.Code_OK) {
					t.Errorf("tls=%v: %v %v, want OK", useTLS, r, err)
				}
				if !want && status.Code(err) != codes.Unavailable {
					t.Errorf("tls=%v: %v, want Unavailable", useTLS, err)
				}
				// A refused connection leaves one warn line naming --tls-mode.
				spoke := map[bool]string{true: "spoke TLS to the plaintext gRPC port", false: "spoke plaintext to the gRPC port"}[useTLS]
				if got := logs.String(); !want && (!strings.Contains(got, spoke) || !strings.Contains(got, "--tls-mode") ||
					!strings.Contains(got, `"level":"warn"`)) {
					t.Errorf("tls=%v: no warn line in %q", useTLS, got)
				} else if want && strings.Contains(got, spoke) {
					t.Errorf("tls=%v: served, yet logged %q", useTLS, got)
				}
			}
		})
	}
	if _, err := New(Config{TLSMode: TLSEnforcing, Core: brokertest.Start(t, nil, nil).Broker}); err == nil {
		t.Error("TLS mode without a certificate accepted")
	}
	if _, err := New(Config{}); err == nil {
		t.Error("a server without a core accepted")
	}
}
