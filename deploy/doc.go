// Package deploy holds the example deployment of popshim with Prometheus and
// Grafana: deploy/docker-compose.yml, deploy/Dockerfile, the Prometheus
// scrape configuration and the Grafana dashboard
// (grafana/popshim-dashboard.json) with its provisioning files.
//
// It has no Go code to import: its test checks that every metric the
// dashboard's PromQL expressions name is exported by a running popshim, so
// a renamed metric breaks the build rather than a panel. What it must not
// do: grow deployment logic in Go; the files here are examples an operator
// copies, not a supported installer.
package deploy
