package namesrv

// REGISTER_BROKER (103) and UNREGISTER_BROKER (104) — sent by popshim to
// external Apache RocketMQ name servers (--namesrv-addr); popshim does not
// serve these codes itself.
//
// Request header (namesrv/RegisterBrokerRequestHeader.java): brokerName,
// brokerAddr (advertised ip:port), clusterName, haServerAddr (ip:port+1,
// the Java default HA port; a single broker never uses it), brokerId 0
// (master), enableActingMaster false, compressed false, bodyCrc32 (CRC32 of
// the body & 0x7FFFFFFF). Request version 479 (≥ 37, so the body is read in
// the current format).
//
// Body: RegisterBrokerBody {"topicConfigSerializeWrapper":{"dataVersion":
// {...},"topicConfigTable":{name:TopicConfig}},"filterServerList":[]} with
// every topic of the TopicTable (system topics included: TBW102 when
// auto-create is on, the cluster-name and broker-name topics).
//
// Behaviour (broker/.../out/BrokerOuterAPI.java): one long-lived connection per name
// server (closing it makes the name server drop the broker at once);
// register at start, then every --register-interval, within a second of
// any topic-table change (the dataVersion counter moves, so the name
// server applies changed queue counts), within a second of the store
// becoming unwritable or writable again (Self.Writable: every topic is then
// registered without or with PermWrite) or of a brokerPermission change
// (Self.MaskPerm; the dataVersion counter moves once more per change of
// either), and at once when RegisterNow asks
// (UPDATE_AND_CREATE_TOPIC waits for that round, FINDINGS F3); reconnect
// after errors. On shutdown
// UNREGISTER_BROKER (brokerName, brokerAddr, clusterName, brokerId 0) goes
// to each name server. Failures are logged, never fatal.

import (
	"context"
	"encoding/json"
	"hash/crc32"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// registerCheckInterval is how often the registrar looks for topic-table
// changes between periodic registrations.
const registerCheckInterval = time.Second

// registerTimeout bounds one REGISTER_BROKER round trip (Java's
// registerBrokerTimeoutMills default, 24 s, is far above what a healthy
// name server needs; 6 s keeps shutdown quick).
const registerTimeout = 6 * time.Second

// RegisterBrokerBody is body/RegisterBrokerBody.java (uncompressed form):
// what REGISTER_BROKER carries.
type RegisterBrokerBody struct {
	// TopicConfigSerializeWrapper holds every topic and the table's data
	// version.
	TopicConfigSerializeWrapper codec.TopicConfigWrapper `json:"topicConfigSerializeWrapper"`
	FilterServerList            []string                 `json:"filterServerList"` // always empty

}

// Registrar keeps this broker registered with external name servers. Build
// with NewRegistrar, Start once, Close once. Its goroutine owns the client
// connections.
type Registrar struct {
	self     Self
	topics   Topics
	addrs    []string
	interval time.Duration
	log      zerolog.Logger

	stop    chan struct{}
	ctx     context.Context // cancelled by Close, so a hanging dial cannot delay shutdown
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once
	clients map[string]*client.Conn // owned by the loop goroutine, then by Close

	kick    chan struct{} // capacity 1: a RegisterNow is waiting
	mu      sync.Mutex
	waiters []func() // REQUIRES: mu held. RegisterNow callbacks for the next round.
	closed  bool     // REQUIRES: mu held
}

// Topics is what the registrar needs of the topic table (broker/meta's
// TopicTable implements it); called on the registrar's goroutine.
type Topics interface {
	// All returns every topic configuration.
	All() []popstore.TopicMeta
	// DataVersion changes whenever the table changes.
	DataVersion() codec.DataVersion
}

// NewRegistrar returns a registrar of self with the name servers addrs
// (host:port), registering every topic of topics, that re-registers every
// interval (≤ 0 means 30 s, RocketMQ's registerNameServerPeriod).
func NewRegistrar(self Self, topics Topics, addrs []string, interval time.Duration, log zerolog.Logger) *Registrar {
	if interval <= 0 {
		interval = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Registrar{
		self: self, topics: topics, addrs: addrs, interval: interval,
		log:     log.With().Str("component", "registrar").Logger(),
		stop:    make(chan struct{}),
		ctx:     ctx,
		cancel:  cancel,
		clients: make(map[string]*client.Conn, len(addrs)),
		kick:    make(chan struct{}, 1),
	}
}

// Start launches the registration goroutine; the first round runs at once.
func (r *Registrar) Start() {
	r.wg.Add(1)
	go r.loop()
}

func (r *Registrar) loop() {
	defer r.wg.Done()
	tick := time.NewTicker(registerCheckInterval)
	defer tick.Stop()
	var last time.Time
	var lastDV codec.DataVersion
	lastWritable, permEpoch := true, int64(0)
	lastState := r.self.advertisedState()
	for {
		w := r.self.writable()
		if w != lastWritable {
			lastWritable = w
			r.log.Warn().Bool("writable", w).Msg("store writability changed; re-registering with the topic write permission adjusted")
		}
		if st := r.self.advertisedState(); st != lastState {
			// The name server applies a registration's queue data only
			// when its dataVersion changed: count every change of the
			// advertised perms (writability, brokerPermission) into it.
			permEpoch++
			lastState = st
		}
		r.mu.Lock()
		waiters := r.waiters
		r.waiters = nil
		r.mu.Unlock()
		dv := r.topics.DataVersion()
		dv.Counter += permEpoch
		if len(waiters) > 0 || time.Since(last) >= r.interval || dv != lastDV {
			r.registerAll(dv)
			last, lastDV = time.Now(), dv
		}
		for _, w := range waiters {
			w()
		}
		select {
		case <-r.stop:
			return
		case <-tick.C:
		case <-r.kick:
		}
	}
}

// RegisterNow asks for a registration round with the current topic table
// (the Java broker's registerIncrementBrokerData after a topic creation)
// and calls done exactly once: when a round that started after this call
// has been answered (or has failed) at every name server, or after
// timeout, whichever comes first, or at once when the registrar is
// closed. done runs on the registrar's goroutine or a timer goroutine and
// must not block. Any goroutine; never waits.
func (r *Registrar) RegisterNow(timeout time.Duration, done func()) {
	var once sync.Once
	fire := func() { once.Do(done) }
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		fire()
		return
	}
	t := time.AfterFunc(timeout, fire)
	r.waiters = append(r.waiters, func() { t.Stop(); fire() })
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// client returns the live connection to addr, dialling when needed.
func (r *Registrar) client(ctx context.Context, addr string) (*client.Conn, error) {
	if c := r.clients[addr]; c != nil {
		select {
		case <-c.Done():
			delete(r.clients, addr)
		default:
			return c, nil
		}
	}
	l := r.log
	c, err := client.DialContext(ctx, addr, client.Options{Log: &l})
	if err != nil {
		return nil, err
	}
	r.clients[addr] = c
	return c, nil
}

// invoke sends req to addr on its long-lived connection. A timed-out or
// cancelled call keeps the connection (the name server ties the broker's
// registration to it); a transport failure closes the client, and the next
// call dials again.
func (r *Registrar) invoke(ctx context.Context, addr string, req *codec.Command) (*codec.Command, error) {
	c, err := r.client(ctx, addr)
	if err != nil {
		return nil, err
	}
	return c.Invoke(ctx, req)
}

// registerBody builds the REGISTER_BROKER body for the current table.
func (r *Registrar) registerBody(dv codec.DataVersion) []byte {
	all := r.topics.All()
	w := codec.TopicConfigWrapper{DataVersion: dv, TopicConfigTable: make(map[string]codec.TopicConfig, len(all))}
	for _, m := range all {
		tc := meta.TopicConfigOf(m)
		tc.Perm = r.self.AdvertisedPerm(tc.Perm)
		if tc.Attributes == nil {
			tc.Attributes = map[string]string{}
		}
		if tc.TopicFilterType == "" {
			tc.TopicFilterType = codec.TopicFilterSingleTag
		}
		w.TopicConfigTable[m.TopicName] = tc
	}
	body, _ := json.Marshal(RegisterBrokerBody{TopicConfigSerializeWrapper: w, FilterServerList: []string{}}) // plain data
	return body
}

// identity returns the header fields naming this broker.
func (r *Registrar) identity() map[string]string {
	addr := r.self.Addr()
	return map[string]string{
		"brokerName":  r.self.BrokerName,
		"brokerAddr":  addr,
		"clusterName": r.self.ClusterName,
		"brokerId":    "0",
	}
}

func (r *Registrar) registerAll(dv codec.DataVersion) {
	body := r.registerBody(dv)
	addr := r.self.Addr()
	ha := addr
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if p, err := strconv.Atoi(port); err == nil {
			ha = net.JoinHostPort(host, strconv.Itoa(p+1))
		}
	}
	for _, ns := range r.addrs {
		ext := r.identity()
		ext["haServerAddr"] = ha
		ext["enableActingMaster"] = "false"
		ext["compressed"] = "false"
		ext["bodyCrc32"] = strconv.FormatInt(int64(crc32.ChecksumIEEE(body)&0x7FFFFFFF), 10)
		req := codec.NewRequest(codec.RequestRegisterBroker, 0, ext, body)
		ctx, cancel := context.WithTimeout(r.ctx, registerTimeout)
		resp, err := r.invoke(ctx, ns, req)
		cancel()
		switch {
		case err != nil:
			r.log.Warn().Err(err).Str("namesrv", ns).Msg("register broker failed")
		case resp.Code != codec.Success:
			r.log.Warn().Int32("code", resp.Code).Str("remark", resp.Remark).Str("namesrv", ns).Msg("register broker refused")
		default:
			r.log.Debug().Str("namesrv", ns).Int64("dataVersion", dv.Counter).Msg("broker registered")
		}
	}
}

// Close stops the loop, sends UNREGISTER_BROKER to each name server within
// ctx, and closes the connections. Idempotent.
func (r *Registrar) Close(ctx context.Context) {
	r.once.Do(func() {
		close(r.stop)
		r.cancel()
		r.wg.Wait()
		r.mu.Lock()
		r.closed = true
		waiters := r.waiters
		r.waiters = nil
		r.mu.Unlock()
		for _, w := range waiters {
			w()
		}
		for _, ns := range r.addrs {
			req := codec.NewRequest(codec.RequestUnregisterBroker, 0, r.identity(), nil)
			uctx, cancel := context.WithTimeout(ctx, registerTimeout)
			resp, err := r.invoke(uctx, ns, req)
			cancel()
			switch {
			case err != nil:
				r.log.Warn().Err(err).Str("namesrv", ns).Msg("unregister broker failed")
			case resp.Code != codec.Success:
				r.log.Warn().Int32("code", resp.Code).Str("namesrv", ns).Msg("unregister broker refused")
			}
		}
		for addr, c := range r.clients {
			_ = c.Close()
			delete(r.clients, addr)
		}
	})
}
