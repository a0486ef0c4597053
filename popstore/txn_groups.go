package popstore

import "github.com/popshim/popshim/codec"

// Consumer-group writes. Like every Txn method they run on the Txn's
// goroutine (the batch writer); the change is durable, and visible to
// Store.Group/Groups/GroupTable, once Commit's synced write has returned.

// PutGroup creates or replaces a consumer group's configuration (stored as
// SubscriptionGroupConfig JSON under "g/"+GroupName) and advances the group
// table version in the same WriteBatch. g is copied. Errors: ErrBadName
// (empty name, 0x00 or '@'; RocketMQ's stricter rule is codec.ValidateGroup,
// for the caller), ErrTxnDone.
func (t *Txn) PutGroup(g GroupMeta) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := checkName("group", g.GroupName); err != nil {
		return err
	}
	t.lockSerial()
	g = g.clone()
	if g.GroupRetryPolicy.Type == "" {
		g.GroupRetryPolicy.Type = codec.GroupRetryPolicyCustomized // what the stored JSON says
	}
	t.b.put(cfiMeta, []byte(metaGroupPrefix+g.GroupName), encodeGroupMeta(&g))
	t.setGroup(g.GroupName, &g)
	t.bumpGroupsVersion()
	return nil
}

// DeleteGroup removes a consumer group's configuration; its consumer
// offsets, checkpoints and retry topics stay (RocketMQ's
// DELETE_SUBSCRIPTIONGROUP with cleanOffset=false). Deleting a missing
// group is not an error and does not advance the table version.
// Errors: ErrTxnDone.
func (t *Txn) DeleteGroup(name string) error {
	if err := t.check(); err != nil {
		return err
	}
	t.lockSerial()
	_, existed := t.Group(name)
	t.b.del(cfiMeta, []byte(metaGroupPrefix+name))
	t.setGroup(name, nil)
	if existed {
		t.bumpGroupsVersion()
	}
	return nil
}

func (t *Txn) setGroup(name string, g *GroupMeta) {
	if t.groups == nil {
		t.groups = make(map[string]*GroupMeta)
	}
	prev, had := t.groups[name]
	t.journal(func() {
		if had {
			t.groups[name] = prev
		} else {
			delete(t.groups, name)
		}
	})
	t.groups[name] = g
}

// bumpGroupsVersion advances the group table version by one, stamps it
// with the store clock and writes it. REQUIRES: t.serial.
func (t *Txn) bumpGroupsVersion() {
	prev, prevSet := t.gver, t.gverSet
	t.journal(func() { t.gver, t.gverSet = prev, prevSet })
	if !t.gverSet {
		t.gver = t.s.groupsVer // committed value; stable while serialMu is held
	}
	t.gver.counter++
	t.gver.timestampMillis = t.s.now()
	t.gverSet = true
	t.b.put(cfiMeta, []byte(metaGroupsVersionKey), t.gver.encode())
}

// Group is Store.Group seen through this Txn's writes.
func (t *Txn) Group(name string) (GroupMeta, bool) {
	if g, ok := t.groups[name]; ok {
		if g == nil {
			return GroupMeta{}, false
		}
		return g.clone(), true
	}
	return t.s.Group(name)
}

// DeleteGroupOffsets removes every committed consume offset of group, on
// every topic and queue (DELETE_SUBSCRIPTIONGROUP with cleanOffset=true),
// and returns how many it removed. It walks the in-memory offset table
// (cost grows with the number of stored offsets, not with the group's),
// under the store's read lock, plus this Txn's own writes. Errors: ErrTxnDone.
func (t *Txn) DeleteGroupOffsets(group string) (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	seen := make(map[offsetID]struct{})
	t.s.mu.RLock()
	for id := range t.s.offsets {
		if id.group == group {
			seen[id] = struct{}{}
		}
	}
	t.s.mu.RUnlock()
	for id, v := range t.offsets {
		if id.group == group && v.present {
			seen[id] = struct{}{}
		}
	}
	ids := make([]offsetID, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	for _, id := range ids {
		if err := t.DeleteConsumerOffset(id.group, id.topic, id.queueId); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
