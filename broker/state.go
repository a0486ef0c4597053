package broker

import (
	"errors"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// statePrefix keeps the names SaveState writes apart from the other
// free-form meta values of the core (popstore Txn.PutMetaValue).
const statePrefix = "state/"

// SaveState durably stores value (any bytes; nil or empty clears it) under
// name for a protocol endpoint's own state that must outlive a restart,
// such as the gRPC endpoint's push-consumer leases. One background-lane
// writer op; done runs after the fsync with nil, or with the *Error of a
// refused or failed write (SYSTEM_BUSY when the lane is full). Any
// goroutine; never blocks.
func (b *Broker) SaveState(name string, value []byte, done func(error)) {
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 64 + len(value),
		Apply: func(tx *popstore.Txn) error { return tx.PutMetaValue(statePrefix+name, value) },
		Done: func(err error) {
			if err != nil {
				done(writeFailed("save state", err))
				return
			}
			done(nil)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		done(SubmitError("", err))
	}
}

// State returns what SaveState stored under name; ok=false when nothing
// (or an empty value) is stored. Errors: the store's read errors. Blocks
// on RocksDB; any goroutine.
func (b *Broker) State(name string) (value []byte, ok bool, err error) {
	v, err := b.Store.MetaValue(statePrefix + name)
	if errors.Is(err, popstore.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, len(v) > 0, nil
}
