// Package metrics holds the scrape-time Prometheus collectors over the
// core's state: the consumer gauges of Java's ConsumerLagCalculator
// (ConsumerLagCollector). They read in-memory figures on the scraping
// goroutine when /metrics is scraped.
//
// Counters and histograms that operations update as they run are not
// here: they live with the code that counts (broker.Metrics, the batch
// writer, the remoting server, the client table's collector).
//
// It must not read RocksDB at scrape time (a scan per scrape cost a third
// of the ACK throughput once), take a lock the writer holds, or import a
// protocol package.
package metrics
