package tools

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// ConnOptions are the connection settings `popshim send` and `popshim
// consume` share, for a broker started with TLS (--tls-cert) or with
// authentication (--auth-enabled, --acl-file). The zero value is plaintext
// and unsigned, as before these options existed.
type ConnOptions struct {
	// TLS makes every connection (name server and brokers) speak TLS.
	TLS bool
	// TLSCA, when set, is a PEM file of the CA that signed the broker's
	// certificate, which is then verified (host name included); empty
	// means the certificate is not verified, as the Java client's default
	// tls.test.mode.enable. Setting it implies TLS.
	TLSCA string
	// AccessKey and SecretKey, when AccessKey is set, sign every request
	// as RocketMQ's AclClientRPCHook does (AccessKey and Signature
	// extFields; HMAC-SHA1, client.SignRequest).
	AccessKey, SecretKey string
}

// clientOptions returns the remoting options of every connection, or an
// error naming the flag that is wrong (an unreadable --tls-ca file, a
// --secret-key without --access-key).
func (c ConnOptions) clientOptions() (client.Options, error) {
	var co client.Options
	if c.TLS || c.TLSCA != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if c.TLSCA == "" {
			cfg.InsecureSkipVerify = true //nolint:gosec // the Java client's default (tls.test.mode.enable); --tls-ca verifies
		} else {
			pem, err := os.ReadFile(c.TLSCA)
			if err != nil {
				return co, fmt.Errorf("--tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return co, fmt.Errorf("--tls-ca %s: no PEM certificate in it", c.TLSCA)
			}
			cfg.RootCAs = pool
		}
		co.TLS = cfg
	}
	if c.AccessKey == "" {
		if c.SecretKey != "" {
			return co, errors.New("--secret-key needs --access-key")
		}
		return co, nil
	}
	ak, sk := c.AccessKey, c.SecretKey
	co.BeforeRequest = func(req *codec.Command) { client.SignRequest(req, ak, sk) }
	return co, nil
}

// dial connects to the name server with these settings and returns it with
// an empty set of broker connections that dial the same way. Errors: a
// flag that is wrong (clientOptions), no name server reachable.
func (c ConnOptions) dial(ctx context.Context, namesrv string) (*nameServer, *brokerConns, error) {
	co, err := c.clientOptions()
	if err != nil {
		return nil, nil, err
	}
	ns, err := dialNameServer(ctx, namesrv, co)
	if err != nil {
		return nil, nil, err
	}
	return ns, newBrokerConns(co), nil
}
