package auth

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/codec"
)

// PlainReloadInterval is how often the ACL 1.0 file is checked for
// changes (RocketMQ's AclFileWatchService polls every 500 ms).
var PlainReloadInterval = 500 * time.Millisecond

// aclExceptionPrefix starts the remark of an ACL 1.0 refusal: the 1.0
// broker's RPC hook threw AclException, and NettyRemotingAbstract answered
// SYSTEM_ERROR (1) with the exception's text (then ", " and the top stack
// frame, which popshim leaves out).
const aclExceptionPrefix = "org.apache.rocketmq.acl.common.AclException: "

// PlainError is an ACL 1.0 refusal: answer SYSTEM_ERROR (1) with Error()
// as remark, as a 1.0 broker did.
type PlainError struct{ Msg string }

// Error returns the remark a 1.0 broker sent with SYSTEM_ERROR (1):
// the AclException class name and its message.
func (e *PlainError) Error() string { return aclExceptionPrefix + e.Msg }

// plainACL serves --acl-file: the parsed file, swapped atomically when
// the watcher sees new content.
type plainACL struct {
	path string
	cur  atomic.Pointer[plainConfig]
	log  zerolog.Logger
	stop chan struct{}
	wg   sync.WaitGroup
}

func loadPlainACL(path string, log zerolog.Logger) (*plainACL, error) {
	c, raw, err := readPlain(path)
	if err != nil {
		return nil, err
	}
	p := &plainACL{path: path, log: log, stop: make(chan struct{})}
	p.cur.Store(c)
	log.Info().Str("file", path).Int("accounts", len(c.accounts)).Msg("ACL 1.0 file loaded")
	p.wg.Add(1)
	go p.watch(raw)
	return p, nil
}

// watch reloads the file when its content changes; a file that does not
// parse, or is gone or unreadable, is logged (once until it is readable
// again) and the previous one stays in force.
func (p *plainACL) watch(last []byte) {
	defer p.wg.Done()
	t := time.NewTicker(PlainReloadInterval)
	defer t.Stop()
	readFailed := false // logged once per stretch of unreadable file
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		raw, err := os.ReadFile(p.path)
		if err != nil {
			if !readFailed {
				p.log.Warn().Str("file", p.path).Err(err).Msg("ACL 1.0 file cannot be read; keeping the accounts last loaded")
				readFailed = true
			}
			continue
		}
		readFailed = false
		if bytes.Equal(raw, last) {
			continue
		}
		last = raw
		c, err := parsePlain(raw)
		if err != nil {
			p.log.Error().Str("file", p.path).Err(err).Msg("ACL 1.0 file changed but does not parse; keeping the previous one")
			continue
		}
		p.cur.Store(c)
		p.log.Info().Str("file", p.path).Int("accounts", len(c.accounts)).Msg("ACL 1.0 file reloaded")
	}
}

func (p *plainACL) close() {
	close(p.stop)
	p.wg.Wait()
}

// check applies the ACL 1.0 rules (PlainPermissionManager.validate) when
// they own req: its peer is in globalWhiteRemoteAddresses, or its
// AccessKey is an account of the file. handled is false otherwise, and the
// ACL 2.0 checks decide (with ACL 2.0 off, the 1.0 rules own every
// request, as on a 1.0 broker).
func (p *plainACL) check(remote net.Addr, req *codec.Command, only bool) (handled bool, err error) {
	c := p.cur.Load()
	ip := sourceIP(remote)
	for _, g := range c.global {
		if g.match(ip) {
			return true, nil
		}
	}
	ak, hasAK := req.Ext(FieldAccessKey)
	acc, known := c.accounts[ak]
	if !known && !only {
		return false, nil
	}
	switch {
	case !hasAK:
		return true, &PlainError{"No accessKey is configured"}
	case !known:
		return true, &PlainError{fmt.Sprintf("No acl config for %s", ak)}
	}
	if acc.white.match(ip) {
		return true, nil
	}
	if sig, _ := req.Ext(FieldSignature); !acc.mac.verify(req, sig) {
		return true, &PlainError{fmt.Sprintf("Check signature failed for accessKey=%s", ak)}
	}
	return true, acc.checkPerms(req)
}

// plainAdminCodes are Permission.ADMIN_CODE: UPDATE_AND_CREATE_TOPIC,
// UPDATE_BROKER_CONFIG, DELETE_TOPIC_IN_BROKER,
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, DELETE_SUBSCRIPTIONGROUP.
var plainAdminCodes = map[int32]bool{17: true, 25: true, 215: true, 200: true, 207: true}

// checkPerms is PlainPermissionChecker.check over the resources
// PlainAccessResource.parse takes from req.
func (a *plainAccess) checkPerms(req *codec.Command) error {
	if a.adminFlag {
		return nil
	}
	if plainAdminCodes[req.Code] {
		return &PlainError{fmt.Sprintf("Need admin permission for request code=%d, but accessKey=%s is not", req.Code, a.AccessKey)}
	}
	needs, err := plainNeeds(req)
	if err != nil {
		return err
	}
	// RMQ_SYS_TRACE_TOPIC asked with PUB skips the check.
	if p, ok := needs["RMQ_SYS_TRACE_TOPIC"]; ok && p == permPub {
		return nil
	}
	for res, need := range needs {
		isGroup := isRetry(res)
		owned, ok := a.perms[res]
		if !ok {
			owned = a.defTopic
			if isGroup {
				owned = a.defGroup
			}
			if !checkPerm(need, owned) {
				return &PlainError{"No default permission for " + printRes(res, isGroup)}
			}
			continue
		}
		if !checkPerm(need, owned) {
			return &PlainError{"No permission for " + printRes(res, isGroup)}
		}
	}
	return nil
}

func printRes(res string, isGroup bool) string {
	if isGroup {
		return "group:" + res[len(codec.RetryGroupTopicPrefix):]
	}
	return "topic:" + res
}

// plainNeeds is PlainAccessResource.parse's request-code switch: resource
// (topic, or %RETRY%group for a group) → permission asked.
func plainNeeds(req *codec.Command) (map[string]byte, error) {
	f := req.ExtFields
	out := make(map[string]byte, 2)
	add := func(res string, p byte) { out[res] = p } // addResourceAndPerm overwrites
	retry := func(g string) string { return codec.RetryGroupTopicPrefix + g }
	switch req.Code {
	case codec.RequestSendMessage:
		if t := f["topic"]; isRetry(t) {
			add(retry(f["group"]), permSub)
		} else {
			add(t, permPub)
		}
	case codec.RequestSendMessageV2, codec.RequestSendBatchMessage:
		// the fields may be in the typed slots (codec.Command.Ext)
		if t, _ := req.Ext("b"); isRetry(t) {
			g, _ := req.Ext("a")
			add(retry(g), permSub)
		} else {
			add(t, permPub)
		}
	case codec.RequestConsumerSendMsgBack:
		add(retry(f["group"]), permSub)
	case codec.RequestPullMessage:
		add(f["topic"], permSub)
		add(retry(f["consumerGroup"]), permSub)
	case codec.RequestHeartBeat:
		hb, err := codec.DecodeHeartbeatData(req.Body)
		if err != nil {
			return nil, &PlainError{err.Error()}
		}
		for _, c := range hb.ConsumerDataSet {
			add(retry(c.GroupName), permSub)
			for _, s := range c.SubscriptionDataSet {
				add(s.Topic, permSub)
			}
		}
	case codec.RequestUnregisterClient, codec.RequestGetConsumerListByGroup:
		add(retry(f["consumerGroup"]), permSub)
	case codec.RequestUpdateConsumerOffset:
		add(retry(f["consumerGroup"]), permSub)
		add(f["topic"], permSub)
	}
	return out, nil
}
