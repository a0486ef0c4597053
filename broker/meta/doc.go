// Package meta owns the broker's topic metadata: the in-memory TopicTable
// (queue counts, permissions, system topics, the data version reported to
// name servers) loaded from popstore's meta column family at start, topic
// auto-creation (%RETRY%, %DLQ%, TBW102 defaults), admin create and delete,
// the SET_MESSAGE_REQUEST_MODE table of (topic, consumerGroup) request
// modes that is persisted beside it, and the subscription-group table
// (GroupTable: lookup, auto-creation with --auto-create-subscription-group,
// admin create/replace/delete, the system groups made at start) over
// popstore's durable groups.
//
// Callers: request handlers on the gnet event loops read the table (Get,
// All, RequestMode, IsSystem take a read lock only) and start writes
// (GetOrCreate, Create, Delete, SetRequestMode), which never block: they
// queue an op on the batch writer's background lane and report through a
// callback that runs on the writer's completer goroutine. The revive loop
// and the name-server registration read and auto-create topics the same
// way. NewTopicTable reads RocksDB and is for startup only.
//
// It must not answer the network, know request codes, or wait on storage
// from a table method; it imports no other handler package. GroupTable
// follows the same rules: lookups read memory, writes queue a background
// op and report through a callback.
package meta
