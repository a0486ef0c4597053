package grpcserver

import (
	"context"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// One client id holds at most maxTelemetryStreams Telemetry streams open:
// the next is refused with RESOURCE_EXHAUSTED, another client id is not
// affected, and once one of the streams ends the client may open one
// again. Before, 30,720 streams nobody read held 1,340 MiB.
func TestTelemetryStreamsPerClientBounded(t *testing.T) {
	_, addr := startServer(t, DefaultConfig())
	c := dial(t, addr, false)
	open := func(id string) (context.CancelFunc, *v2.TelemetryCommand, error) {
		ctx, cancel := context.WithTimeout(withClient(context.Background(), id), callBound)
		t.Cleanup(cancel)
		stream, err := c.Telemetry(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: goProducerSettings("TopicA")}}); err != nil {
			t.Fatal(err)
		}
		reply, err := stream.Recv()
		return cancel, reply, err
	}
	var cancels []context.CancelFunc
	for i := 0; i < maxTelemetryStreams; i++ {
		cancel, reply, err := open("many@1")
		if err != nil || reply.GetStatus().GetCode() != v2.Code_OK {
			t.Fatalf("stream %d: %v %v", i, reply.GetStatus(), err)
		}
		cancels = append(cancels, cancel)
	}
	if _, _, err := open("many@1"); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("stream %d of one client: %v, want RESOURCE_EXHAUSTED", maxTelemetryStreams+1, err)
	}
	if _, reply, err := open("other@1"); err != nil || reply.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("another client's stream: %v %v", reply.GetStatus(), err)
	}
	cancels[0]() // the client ends one stream
	ok := waitFor(100, func() bool {
		_, reply, err := open("many@1")
		return err == nil && reply.GetStatus().GetCode() == v2.Code_OK
	})
	if !ok {
		t.Fatal("no stream could be opened again after one ended")
	}
}
