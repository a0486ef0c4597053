// Package codec reads and writes Apache RocketMQ remoting frames and the
// binary and text structures carried inside them. It imports neither gnet nor
// RocksDB.
//
// Frame layout (all integers big-endian), as in RocketMQ's
// remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java:
//
//	+--------------+--------------+-----------+------------+-----------+
//	| length int32 | serType byte | hlen u24  | header     | body      |
//	+--------------+--------------+-----------+------------+-----------+
//	  0              4              5           8            8+hlen
//
// length counts every byte after itself: 4 + hlen + len(body). serType 0 is
// a JSON header, 1 is the ROCKETMQ binary header. popshim accepts both and
// always replies with JSON, as a default Java broker does.
package codec
