package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// DefaultTopic is the topic whose route a producer borrows for a topic the
// name server does not know (TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC).
const DefaultTopic = "TBW102"

// defaultTopicQueueNums is how many of DefaultTopic's queues a producer
// uses for a new topic (DefaultMQProducer.defaultTopicQueueNums, 4), and
// what it asks the broker to create.
const defaultTopicQueueNums = 4

// requestTimeout bounds one request that does not long-poll.
const requestTimeout = 5 * time.Second

// errTopicNotExist is the name server's TOPIC_NOT_EXIST (17) answer.
var errTopicNotExist = errors.New("tools: topic does not exist")

// queueRoute is one queue of a route: the broker that holds it (by name and
// master address) and its queue id.
type queueRoute struct {
	Broker  string
	Addr    string
	QueueID int32
}

// brokerRoute is one broker of a route with a master (id 0) address and the
// topic's queue counts and perm there.
type brokerRoute struct {
	Name        string
	Addr        string
	ReadQueues  int32
	WriteQueues int32
	Perm        int32
}

// nameServer is a connection to the first reachable address of --namesrv.
type nameServer struct {
	addr string
	c    *client.Conn
}

// dialNameServer connects to the first address of addrs ("host:port", or
// several joined by ';' as namesrvAddr) that accepts a connection. The
// error names every address tried and says what to check.
func dialNameServer(ctx context.Context, addrs string, co client.Options) (*nameServer, error) {
	var errs []error
	for _, a := range strings.Split(addrs, ";") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		c, err := client.DialContext(ctx, a, co)
		if err == nil {
			return &nameServer{addr: a, c: c}, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, errors.New("no name server address given (--namesrv host:port)")
	}
	return nil, fmt.Errorf("cannot reach the name server at %s (is popshim running? `make run` starts it): %w",
		addrs, errors.Join(errs...))
}

// Close closes the connection.
func (ns *nameServer) Close() { _ = ns.c.Close() }

// route asks for topic's route with GET_ROUTEINFO_BY_TOPIC (105). An
// unknown topic is errTopicNotExist; any other non-success answer is an
// error carrying its code and remark.
func (ns *nameServer) route(ctx context.Context, topic string) (codec.TopicRouteData, error) {
	req := codec.NewRequest(codec.RequestGetRouteInfoByTopic, 0, make(map[string]string, 2), nil)
	codec.GetRouteInfoRequestHeader{Topic: topic}.Encode(req)
	resp, err := invoke(ctx, ns.c, req, requestTimeout)
	if err != nil {
		return codec.TopicRouteData{}, fmt.Errorf("route of %s from the name server at %s: %w", topic, ns.addr, err)
	}
	switch resp.Code {
	case codec.Success:
	case codec.TopicNotExist:
		return codec.TopicRouteData{}, errTopicNotExist
	default:
		return codec.TopicRouteData{}, fmt.Errorf("route of %s from the name server at %s: %w", topic, ns.addr, replyError(resp))
	}
	r, err := codec.DecodeTopicRouteData(resp.Body)
	if err != nil {
		return codec.TopicRouteData{}, fmt.Errorf("route of %s from the name server at %s: %w", topic, ns.addr, err)
	}
	return r, nil
}

// brokersOf returns the brokers of r that have a master address and a
// queue entry, in the order of r's queue entries.
func brokersOf(r codec.TopicRouteData) []brokerRoute {
	addr := make(map[string]string, len(r.BrokerDatas))
	for _, b := range r.BrokerDatas {
		if a, ok := b.BrokerAddrs[0]; ok && a != "" {
			addr[b.BrokerName] = a
		}
	}
	var out []brokerRoute
	for _, q := range r.QueueDatas {
		if a, ok := addr[q.BrokerName]; ok {
			out = append(out, brokerRoute{Name: q.BrokerName, Addr: a, ReadQueues: q.ReadQueueNums, WriteQueues: q.WriteQueueNums, Perm: q.Perm})
		}
	}
	return out
}

// writeQueues lists the queues a producer sends to, broker by broker, as
// TopicPublishInfo does: writeQueueNums of every writable broker, capped at
// limit when limit > 0 (the DefaultTopic fallback).
func writeQueues(brokers []brokerRoute, limit int32) []queueRoute {
	var out []queueRoute
	for _, b := range brokers {
		if b.Perm&codec.PermWrite == 0 {
			continue
		}
		n := b.WriteQueues
		if limit > 0 {
			n = min(n, limit)
		}
		for q := range n {
			out = append(out, queueRoute{Broker: b.Name, Addr: b.Addr, QueueID: q})
		}
	}
	return out
}

// invoke sends req on c and waits for the reply, at most timeout.
func invoke(ctx context.Context, c *client.Conn, req *codec.Command, timeout time.Duration) (*codec.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.Invoke(ctx, req)
}

// cutShort says why ctx ended, for "consumed 3 of 10 messages <cutShort>":
// the run's --timeout, or an interrupt (SIGINT or SIGTERM cancels it).
func cutShort(ctx context.Context, timeout time.Duration) string {
	if errors.Is(ctx.Err(), context.Canceled) {
		return "before being interrupted"
	}
	return "before --timeout " + timeout.String()
}

// replyError describes a non-success reply by code name and remark.
func replyError(resp *codec.Command) error {
	if resp.Remark == "" {
		return fmt.Errorf("%s (%d)", codec.ResponseName(resp.Code), resp.Code)
	}
	return fmt.Errorf("%s (%d): %s", codec.ResponseName(resp.Code), resp.Code, resp.Remark)
}

// brokerConns holds one connection per broker address, dialled with opts.
type brokerConns struct {
	opts client.Options
	m    map[string]*client.Conn
}

// newBrokerConns returns an empty set that dials with co.
func newBrokerConns(co client.Options) *brokerConns {
	return &brokerConns{opts: co, m: make(map[string]*client.Conn)}
}

// get returns the connection to addr, dialling it on first use.
func (bc *brokerConns) get(ctx context.Context, broker, addr string) (*client.Conn, error) {
	if c, ok := bc.m[addr]; ok {
		return c, nil
	}
	c, err := client.DialContext(ctx, addr, bc.opts)
	if err != nil {
		return nil, fmt.Errorf("cannot reach broker %s at %s (the address the name server hands out: set --broker-ip on the broker if clients reach it by another address): %w", broker, addr, err)
	}
	bc.m[addr] = c
	return c, nil
}

// closeAll closes every connection.
func (bc *brokerConns) closeAll() {
	for _, c := range bc.m {
		_ = c.Close()
	}
}
