package grpcserver

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// Push-consumer leases across a graceful restart. The proxy releases every
// handle it renews when it stops (clearAllHandle), so each message a
// long-running listener holds comes back a second later, to any consumer of
// the group. popshim instead saves its lease table in the store when it
// stops gracefully (after the gRPC server has stopped and the renewals in
// flight have completed) and loads it at the next start: the renewals go on
// for each client as before, and a client that does not call again within
// ClientExpiry has its leases released then, as one that went away. A
// kill -9 saves nothing: the leased messages come back when their last
// renewed invisible time ends.

// leasesStateName names the saved lease table in the core (SaveState).
const leasesStateName = "grpc/leases"

// savedLease is one lease in the saved table (JSON).
type savedLease struct {
	Client   string `json:"c"`
	Group    string `json:"g"`
	Topic    string `json:"t"`
	Handle   string `json:"h"` // current handle
	FirstPop int64  `json:"f"`
	Renewals int    `json:"r"`
	Attempt  int32  `json:"a"`
}

// keep stops tracking, waits for the renewals in flight, and saves every
// lease through the core, waiting for the fsync or ctx. On any failure the
// leases are released instead (releaseAll), as before. GracefulStop calls
// it once the gRPC server has stopped, before the core's writer closes.
func (t *leases) keep(ctx context.Context) error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	if err := waitGroupCtx(ctx, &t.inflight); err != nil {
		t.releaseAll(ctx)
		return err
	}
	t.mu.Lock()
	saved := make([]savedLease, 0, t.count)
	for id, m := range t.byClient {
		for _, l := range m {
			saved = append(saved, savedLease{Client: id, Group: l.group, Topic: l.topic, Handle: l.handle,
				FirstPop: l.firstPop, Renewals: l.renewals, Attempt: l.attempt})
		}
	}
	t.mu.Unlock()
	if len(saved) == 0 {
		return nil
	}
	raw, err := json.Marshal(saved)
	if err == nil {
		done := make(chan error, 1)
		t.core.SaveState(leasesStateName, raw, func(e error) { done <- e })
		select {
		case err = <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err != nil {
		t.log.Warn().Err(err).Int("leases", len(saved)).Msg("grpc leases not saved; releasing them")
		t.releaseAll(ctx)
		return err
	}
	t.mu.Lock()
	t.byClient, t.count = map[string]map[leaseKey]*lease{}, 0 // handed to the store
	t.metrics.leasesHeld(0)
	t.mu.Unlock()
	t.log.Info().Int("leases", len(saved)).Msg("grpc push-consumer leases saved for the next start")
	return nil
}

// restore loads the lease table the last graceful stop saved, clears it in
// the store, and returns the client ids it held leases for (the caller
// counts each as seen now, so ClientExpiry applies to those that do not
// come back). Call before serving.
func (t *leases) restore() []string {
	raw, ok, err := t.core.State(leasesStateName)
	if err != nil {
		t.log.Warn().Err(err).Msg("grpc saved leases not read; their messages come back after their invisible time")
		return nil
	}
	if !ok {
		return nil
	}
	var saved []savedLease
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.log.Warn().Err(err).Msg("grpc saved leases undecodable; their messages come back after their invisible time")
		saved = nil
	}
	t.core.SaveState(leasesStateName, nil, func(err error) {
		if err != nil {
			t.log.Warn().Err(err).Msg("grpc saved leases not cleared")
		}
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	for _, sl := range saved {
		ei, err := ParseReceiptHandle(sl.Handle)
		if err != nil || sl.Client == "" {
			continue
		}
		m := t.byClient[sl.Client]
		if m == nil {
			m = map[leaseKey]*lease{}
			t.byClient[sl.Client] = m
			ids = append(ids, sl.Client)
		}
		k := keyOf(sl.Group, sl.Topic, ei)
		if _, dup := m[k]; dup {
			continue
		}
		m[k] = &lease{group: sl.Group, topic: sl.Topic, handle: sl.Handle, ei: ei, firstPop: sl.FirstPop,
			renewals: sl.Renewals, attempt: sl.Attempt}
		t.count++
	}
	t.metrics.leasesHeld(t.count)
	if t.count > 0 {
		t.log.Info().Int("leases", t.count).Int("clients", len(ids)).Msg("grpc push-consumer leases restored")
	}
	return ids
}

// waitGroupCtx waits for wg (the lease table's CHANGEs in flight) or ctx,
// whichever is first; when ctx ends first its goroutine stays until wg is
// done (the writer completes every op, also when it closes).
func waitGroupCtx(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("lease CHANGEs still in flight"), ctx.Err())
	}
}
