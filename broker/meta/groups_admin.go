package meta

import (
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// Put creates or replaces subscription groups
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP 200 and its _LIST form 225,
// AdminBrokerProcessor / SubscriptionGroupManager.updateSubscriptionGroupConfig).
// Each config replaces the stored one wholesale except its attributes,
// whose "+key"/"-key" operations are merged into the stored map
// (codec.ApplySubscriptionGroupAttributes; a new group accepts only "+").
// All configs are written in one op on the background lane, so either all
// or none become durable.
//
// Every name is checked first (ValidateGroupName): the first illegal one
// is returned as a *GroupNameError and nothing is queued. Otherwise the
// Submit error is returned (batch.ErrBusy, ErrClosed, ErrFailed; done is
// then never called), or nil and done runs on the writer's completer
// goroutine once the write is durable (nil) or failed: an attribute
// operation the merge refuses fails the op with an error wrapping
// codec.ErrBadAttribute. The caller must not modify cs afterwards. Safe on
// the event loop; done must not block.
func (t *GroupTable) Put(cs []codec.SubscriptionGroupConfig, done func(error)) error {
	for i := range cs {
		if err := ValidateGroupName(cs[i].GroupName); err != nil {
			return err
		}
	}
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 512 * len(cs),
		Apply: func(tx *popstore.Txn) error {
			for i := range cs {
				c := cs[i].Clone()
				old, exists := tx.Group(c.GroupName)
				attrs, err := codec.ApplySubscriptionGroupAttributes(old.Attributes, c.Attributes, !exists)
				if err != nil {
					return err
				}
				c.Attributes = attrs
				if err := tx.PutGroup(popstore.GroupMetaFromConfig(&c)); err != nil {
					return err
				}
			}
			return nil
		},
		Done: func(err error) {
			if err == nil {
				for i := range cs {
					t.log.Info().Str("consumerGroup", cs[i].GroupName).Bool("consumeEnable", cs[i].ConsumeEnable).
						Int32("retryMaxTimes", cs[i].RetryMaxTimes).Msg("subscription group created or updated")
				}
			}
			done(err)
		},
	}
	return t.w.Submit(op)
}

// Delete removes subscription groups (DELETE_SUBSCRIPTIONGROUP 207 and
// DELETE_SUBSCRIPTION_GROUP_LIST 5003). A missing group is not an error.
// With cleanOffset the groups' committed consume offsets on every topic
// are removed in the same write (popstore.Txn.DeleteGroupOffsets); the
// groups' checkpoints, %RETRY% and %DLQ% topics stay, as on a Java broker
// (mqadmin deleteSubGroup -c deletes those topics itself). With
// auto-creation on, the next HEART_BEAT, POP or 352 of a deleted group
// creates it again, as in RocketMQ.
//
// Returns the Submit error (batch.ErrBusy, ErrClosed, ErrFailed; done is
// then never called), else nil and done runs on the writer's completer
// goroutine once the write is durable or failed. Safe on the event loop;
// done must not block.
func (t *GroupTable) Delete(names []string, cleanOffset bool, done func(error)) error {
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 64 * len(names),
		Apply: func(tx *popstore.Txn) error {
			for _, name := range names {
				if err := tx.DeleteGroup(name); err != nil {
					return err
				}
				if cleanOffset {
					if _, err := tx.DeleteGroupOffsets(name); err != nil {
						return err
					}
				}
			}
			return nil
		},
		Done: func(err error) {
			if err == nil {
				t.log.Info().Strs("consumerGroups", names).Bool("cleanOffset", cleanOffset).Msg("subscription groups deleted")
			}
			done(err)
		},
	}
	return t.w.Submit(op)
}
