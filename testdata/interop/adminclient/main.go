// Command adminclient is the live client of the interop mqadmin suite
// (mqadmin_test.sh M6–M9): over popshim's own remoting client it announces
// producer group -pg and POP consumer group -g (subscribing -t) with
// HEART_BEAT, sends -n messages to queue 0 of -t, pops and acks -ack of
// them, prints "ready", then repeats the heartbeat every 5 s for -hold so
// consumerConnection and producerConnection see a connected client.
// M11 runs it with -hold 0s: -n 20 -ack 20 consumes a topic once, -n 0
// -ack 20 after resetOffsetByTime checks the messages come again (a POP
// that finds nothing fails with "code 210"). M30 runs it with -delay 1: the
// messages carry DELAY=1 and each SEND prints "SEND_OK offsetMsgId=ID".
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

func main() {
	addr := flag.String("b", "127.0.0.1:10911", "broker address")
	topic := flag.String("t", "", "topic (must exist)")
	group := flag.String("g", "", "POP consumer group")
	pg := flag.String("pg", "", "producer group")
	brokerName := flag.String("broker-name", "", "broker name (POP header brokerName)")
	n := flag.Int("n", 100, "messages to send")
	acks := flag.Int("ack", 50, "messages to pop and ack")
	hold := flag.Duration("hold", 60*time.Second, "how long to stay connected after ready")
	delay := flag.Int("delay", 0, "DELAY level of the messages sent; with it each SEND prints its offsetMsgId")
	flag.Parse()
	if err := run(*addr, *topic, *group, *pg, *brokerName, *n, *acks, *hold, *delay); err != nil {
		fmt.Fprintln(os.Stderr, "adminclient:", err)
		os.Exit(1)
	}
}

func call(c *client.Conn, req *codec.Command) (*codec.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Invoke(ctx, req)
}

func run(addr, topic, group, pg, brokerName string, n, acks int, hold time.Duration, delay int) error {
	c, err := client.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	clientID := "127.0.0.1@adminclient" + strconv.Itoa(os.Getpid())
	hb := codec.HeartbeatData{ClientID: clientID, ProducerDataSet: []codec.ProducerData{{GroupName: pg}},
		ConsumerDataSet: []codec.ConsumerData{{GroupName: group, ConsumeType: "CONSUME_POP", MessageModel: codec.MessageModelCluster,
			ConsumeFromWhere:    "CONSUME_FROM_LAST_OFFSET",
			SubscriptionDataSet: []codec.SubscriptionData{{Topic: topic, SubString: "*", ExpressionType: "TAG"}}}}}
	heartbeat := func() error {
		resp, err := call(c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, codec.EncodeHeartbeatData(&hb)))
		if err == nil && resp.Code != codec.Success {
			err = fmt.Errorf("HEART_BEAT: code %d %s", resp.Code, resp.Remark)
		}
		return err
	}
	if err := heartbeat(); err != nil {
		return err
	}
	pm := map[string]string{"WAIT": "true"}
	if delay > 0 {
		pm[codec.PropertyDelayTimeLevel] = strconv.Itoa(delay)
	}
	props, _ := codec.EncodeProperties(pm)
	for i := range n {
		h := codec.SendMessageRequestHeader{ProducerGroup: pg, Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
			BornTimestamp: time.Now().UnixMilli(), Properties: props, BrokerName: brokerName}
		req := codec.NewRequest(codec.RequestSendMessageV2, 0, nil, []byte("m-"+strconv.Itoa(i)))
		h.EncodeV2(req)
		resp, err := call(c, req)
		if err != nil {
			return err
		}
		if resp.Code != codec.Success {
			return fmt.Errorf("SEND: code %d %s", resp.Code, resp.Remark)
		}
		if delay > 0 {
			id, _ := resp.Ext("msgId")
			fmt.Println("SEND_OK offsetMsgId=" + id)
		}
	}
	for acked := 0; acked < acks; {
		h := codec.PopMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: 0, MaxMsgNums: int32(min(32, acks-acked)),
			InvisibleTime: 60000, PollTime: 1000, BornTime: time.Now().UnixMilli(), BrokerName: brokerName}
		req := codec.NewRequest(codec.RequestPopMessage, 0, nil, nil)
		h.Encode(req)
		resp, err := call(c, req)
		if err != nil {
			return err
		}
		if resp.Code != codec.Success {
			return fmt.Errorf("POP after %d acks: code %d %s", acked, resp.Code, resp.Remark)
		}
		msgs, err := codec.DecodeMessages(resp.Body)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			ck, _ := m.Property(codec.PropertyPopCK)
			a := codec.AckMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: m.QueueID, Offset: m.QueueOffset,
				ExtraInfo: ck, BrokerName: brokerName}
			req := codec.NewRequest(codec.RequestAckMessage, 0, nil, nil)
			a.Encode(req)
			resp, err := call(c, req)
			if err != nil {
				return err
			}
			if resp.Code != codec.Success {
				return fmt.Errorf("ACK: code %d %s", resp.Code, resp.Remark)
			}
			acked++
		}
	}
	fmt.Println("ready")
	deadline := time.Now().Add(hold)
	for time.Now().Before(deadline) {
		time.Sleep(5 * time.Second)
		if err := heartbeat(); err != nil {
			return err
		}
	}
	return nil
}
