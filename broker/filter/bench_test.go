package filter

import (
	"testing"

	"github.com/popshim/popshim/codec"
)

// benchProps is the properties string of a typical message sent by the
// Java client: tag, keys, unique key, wait flag, cluster, a few user
// properties (the ones the benchmarked selectors read come last).
var benchProps = props(
	"TAGS", "TagA", "KEYS", "order-1234 user-99", "UNIQ_KEY", "7F0000011A2B18B4AAC2476B4A0D0000",
	"WAIT", "true", "CLUSTER", "DefaultCluster", "MIN_OFFSET", "0", "MAX_OFFSET", "1200",
	"region", "eu", "priority", "7", "a", "6", "b", "x")

// BenchmarkMatch measures one evaluation of a typical selector against a
// message's properties string (one pass over the string, no map).
func BenchmarkMatch(b *testing.B) {
	for _, c := range []struct{ name, sql string }{
		{"typical", "a > 5 AND b = 'x'"},
		{"tags", "TAGS IN ('TagA', 'TagB')"},
		{"wide", "(region = 'eu' OR region = 'us') AND priority BETWEEN 3 AND 9 AND TAGS IS NOT NULL AND KEYS CONTAINS 'order-'"},
	} {
		e, err := Compile(c.sql)
		if err != nil {
			b.Fatal(err)
		}
		if !e.Match(benchProps) {
			b.Fatalf("%s: no match", c.name)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.Match(benchProps)
			}
		})
	}
}

// BenchmarkMatchViaMap is the alternative Match avoids, for comparison:
// decode the properties into a map (codec.DecodeProperties, as RocketMQ's
// MessageDecoder.decodeProperties does per message) and look the two
// properties up.
func BenchmarkMatchViaMap(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m := codec.DecodeProperties(benchProps)
		_, _ = m["a"], m["b"]
	}
}

// BenchmarkCompile measures parsing the typical selector (Cached pays it
// once per distinct expression).
func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("a > 5 AND b = 'x'"); err != nil {
			b.Fatal(err)
		}
	}
}
