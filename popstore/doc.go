// Package popstore owns popshim's RocksDB database: the messages, pop
// (checkpoint), offsets and meta column families, their key layouts, and the
// read paths used by the handlers. It never answers the network.
package popstore
