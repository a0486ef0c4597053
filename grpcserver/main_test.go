package grpcserver

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (a
// Telemetry reader, a server or client connection).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
