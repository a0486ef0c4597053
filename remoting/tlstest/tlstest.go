package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Material is one CA with a server and a client certificate. The *File
// fields are PEM files in the directory given to New (certificates, then
// PKCS#8 keys).
type Material struct {
	CAPool *x509.CertPool
	Server tls.Certificate
	Client tls.Certificate

	CAFile, ServerCertFile, ServerKeyFile, ClientCertFile, ClientKeyFile string
}

// New generates the material and writes its files under t.TempDir(). It
// fails t on any error. Any goroutine that may call t.Fatal.
func New(t testing.TB) *Material {
	t.Helper()
	m, err := Generate(t.TempDir())
	if err != nil {
		t.Fatalf("tlstest: %v", err)
	}
	return m
}

// Generate is New for callers without a testing.TB: it writes the files
// into dir, which must exist.
func Generate(dir string) (*Material, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "popshim test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	m := &Material{CAPool: x509.NewCertPool(), CAFile: filepath.Join(dir, "ca.pem")}
	m.CAPool.AddCert(ca)
	if err := writePEM(m.CAFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, certFile, keyFile string) (tls.Certificate, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return tls.Certificate{}, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return tls.Certificate{}, err
		}
		pk, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return tls.Certificate{}, err
		}
		if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
			return tls.Certificate{}, err
		}
		if err := writePEM(keyFile, "PRIVATE KEY", pk); err != nil {
			return tls.Certificate{}, err
		}
		return tls.LoadX509KeyPair(certFile, keyFile)
	}
	m.ServerCertFile, m.ServerKeyFile = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	if m.Server, err = leaf(2, "popshim test server", x509.ExtKeyUsageServerAuth, m.ServerCertFile, m.ServerKeyFile); err != nil {
		return nil, err
	}
	m.ClientCertFile, m.ClientKeyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if m.Client, err = leaf(3, "popshim test client", x509.ExtKeyUsageClientAuth, m.ClientCertFile, m.ClientKeyFile); err != nil {
		return nil, err
	}
	return m, nil
}

// ServerConfig is a server config with the server certificate and
// clientAuth checked against the CA.
func (m *Material) ServerConfig(clientAuth tls.ClientAuthType) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{m.Server}, ClientCAs: m.CAPool, ClientAuth: clientAuth, MinVersion: tls.VersionTLS12}
}

// ClientConfig is a client config that verifies the server against the
// CA and, when withCert, presents the client certificate.
func (m *Material) ClientConfig(withCert bool) *tls.Config {
	c := &tls.Config{RootCAs: m.CAPool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if withCert {
		c.Certificates = []tls.Certificate{m.Client}
	}
	return c
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
