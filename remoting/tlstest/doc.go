// Package tlstest makes throw-away TLS material for tests: a self-signed CA,
// a server certificate for 127.0.0.1 and localhost, and a client
// certificate, all signed by that CA, as tls.Certificate values and as PEM
// files. It is imported by tests only (remoting, handler, conf, bench) and
// must never be used to secure a real deployment: the keys are generated
// per call and written unencrypted.
package tlstest
