package popstore

import "errors"

// Sentinel errors. Callers compare with errors.Is; the store wraps them with
// context using %w.
var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("popstore: store closed")
	// ErrNotFound is returned when a message or value asked for by key or
	// physical offset does not exist (never written, or removed by retention
	// or DeleteTopic).
	ErrNotFound = errors.New("popstore: not found")
	// ErrBadRecord is returned by Txn.AppendMessage when the record is not a
	// RocketMQ stored-message record: shorter than the fixed header, or its
	// TOTALSIZE field disagrees with its length, or its QUEUEID field
	// disagrees with the queueId argument.
	ErrBadRecord = errors.New("popstore: malformed stored-message record")
	// ErrBadName is returned when a topic or consumerGroup name cannot be
	// stored: empty, or containing 0x00 or '@' (both are key separators).
	ErrBadName = errors.New("popstore: invalid topic or group name")
	// ErrWriteRejected marks a failed write that provably did not reach the
	// WAL (for example one refused by a WriteHook before calling the real
	// write). The batch writer fails only that batch for such errors; any
	// other write error is treated as an unknown WAL state and makes the
	// writer fail all later work (sticky failure). Wrap it with %w.
	ErrWriteRejected = errors.New("popstore: write rejected before reaching the WAL")
	// ErrTxnDone is returned when a Txn is used after Commit or Discard.
	ErrTxnDone = errors.New("popstore: transaction already committed or discarded")
)

// ErrApplyPanic wraps a panic raised by an apply function run through
// Txn.Do; the panic's value and stack are logged, that op's writes are rolled
// back and the batch goes on.
var ErrApplyPanic = errors.New("popstore: apply function panicked")
