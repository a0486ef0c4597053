package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestZZDbg(t *testing.T) {
	l := zerolog.New(os.Stderr).Level(zerolog.DebugLevel)
	o := Options{Addr: "127.0.0.1:20911", BrokerName: "broker-a", Messages: 2000, Conns: 4, Inflight: 8, CreateTopic: true, Log: &l}
	o.Normalize()
	o.names("ack", time.Now().UnixMilli())
	cl, err := dialAll(context.Background(), &o)
	if err != nil { t.Fatal(err) }
	defer closeAll(cl)
	rs, st, err := prepare(context.Background(), cl, &o)
	fmt.Println(len(rs), st, err)
	per := map[int32]int{}
	for _, r := range rs { per[r.QueueID]++ }
	fmt.Println(per)
}
