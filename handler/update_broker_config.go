package handler

// UPDATE_BROKER_CONFIG (25), mqadmin updateBrokerConfig -k KEY -v VALUE.
//
// Header: none. Body: java.util.Properties text (MixAll.properties2String).
//
// Behaviour (AdminBrokerProcessor.updateBrokerConfig): popshim applies three
// keys at run time, autoCreateTopicEnable and autoCreateSubscriptionGroup
// ("true"/"false") and brokerPermission (0–7; runtimeBrokerKeys). It stores the new values
// durably in the meta column family first (one write through the writer's
// background lane; they win over the flags at the next start, as Java
// rewrites its properties file), then applies them and answers SUCCESS.
// Every other setting is read at start only (it sizes pools, lanes and
// listeners, or is copied into subsystems): a key of GET_BROKER_CONFIG
// whose value equals the current one is accepted without a change; any
// other key is refused with NO_PERMISSION (16), as Java refuses the keys of
// its black list, the remark naming the key. Nothing is applied when one
// key is refused. An empty body is SUCCESS, as Java. Each applied update
// advances the DataVersion GET_BROKER_CONFIG reports.
//
// A brokerPermission change is registered with the external name servers
// (--namesrv-addr) before the reply, as Java's registerBrokerAll, so the
// routes carry the masked perms from then on.
//
// Response codes: SUCCESS (0); NO_PERMISSION (16) for a key popshim cannot
// change; INVALID_PARAMETER (29) for a value the key does not take;
// SYSTEM_BUSY (2) / SYSTEM_ERROR (1) when the write is refused or fails.

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleUpdateBrokerConfig(c remoting.Conn, req *codec.Command) {
	props := parseProperties(string(req.Body))
	current := parseProperties(string(b.brokerConfigText()))
	apply := map[string]string{}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := props[k]
		if rk, ok := runtimeBrokerKeys[k]; ok {
			pv, err := rk.parse(v)
			if err != nil {
				reply.Code(c, req, codec.InvalidParameter, fmt.Sprintf("%s: %v", k, err))
				return
			}
			apply[k] = pv
			continue
		}
		if cur, ok := current[k]; ok && cur == v {
			continue
		}
		reply.Code(c, req, codec.NoPermission, fmt.Sprintf(
			"Can not update config in black list: popshim reads %s at start only; run time changes: %s",
			k, strings.Join(sortedRuntimeKeys(), ", ")))
		return
	}
	if len(apply) == 0 {
		reply.Code(c, req, codec.Success, "")
		return
	}
	rc := &b.runtimeCfg
	var next map[string]string
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 256,
		Apply: func(tx *popstore.Txn) error {
			// Apply runs on the writer goroutine in submit order: staged
			// holds every earlier update, durable or in this batch.
			rc.mu.Lock()
			defer rc.mu.Unlock()
			next = maps.Clone(rc.staged)
			maps.Copy(next, apply)
			v, err := json.Marshal(next)
			if err != nil {
				return err
			}
			if err := tx.PutMetaValue(brokerConfigMetaKey, v); err != nil {
				return err
			}
			rc.staged = next
			return nil
		},
		Done: func(err error) {
			rc.mu.Lock()
			if err != nil {
				rc.staged = maps.Clone(rc.overrides)
			} else {
				maps.Copy(rc.overrides, next)
				rc.counter++
				rc.stamp = b.Now()
			}
			rc.mu.Unlock()
			if err == nil {
				for k, v := range apply {
					runtimeBrokerKeys[k].set(b, v)
				}
				b.Log.Info().Str("remote", c.RemoteAddr().String()).Interface("changed", apply).
					Msg("UPDATE_BROKER_CONFIG applied")
				if _, ok := apply["brokerPermission"]; ok && b.registrar != nil {
					// As registerBrokerAll in updateBrokerConfig: the
					// name servers hold the masked perms before the reply.
					b.registrar.RegisterNow(createRegisterTimeout, func() { reply.Done(c, req, nil) })
					return
				}
			}
			reply.Done(c, req, err)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		reply.SubmitError(c, req, err)
	}
}

// sortedRuntimeKeys lists runtimeBrokerKeys for remarks and docs.
func sortedRuntimeKeys() []string {
	out := make([]string, 0, len(runtimeBrokerKeys))
	for k := range runtimeBrokerKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
