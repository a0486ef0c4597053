package stack

import (
	"context"
	"errors"
	"fmt"
	"golang.org/x/net/netutil"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/conf"
)

// startHTTP serves /metrics (promhttp over st.Registry) on
// --metrics-listen and, with --pprof, Go's runtime profiles under
// /debug/pprof/. Nothing when --metrics-listen is empty. Errors: the
// listen's.
func (st *Stack) startHTTP(cfg *conf.Config, log zerolog.Logger) (err error) {
	if cfg.MetricsListen == "" {
		return nil
	}
	if st.metricsLn, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
		return fmt.Errorf("stack: metrics listen %s: %w", cfg.MetricsListen, err)
	}
	st.metricsLn = netutil.LimitListener(st.metricsLn, metricsMaxConns) // fdlimit.go
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(st.Registry, promhttp.HandlerOpts{Registry: st.Registry}))
	if cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mctx, stop := context.WithCancel(context.Background())
	st.metricsStop = stop
	st.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return mctx }}
	st.metricsWG = make(chan struct{})
	go func(srv *http.Server, ln net.Listener, done chan struct{}) {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("metrics server stopped")
		}
	}(st.metrics, st.metricsLn, st.metricsWG)
	return nil
}

// stopHTTP cancels the metrics listener's in-flight requests (a CPU
// profile would otherwise run for its ?seconds=), shuts the server down
// within ctx and waits for it. Errors: Shutdown's, prefixed.
func (st *Stack) stopHTTP(ctx context.Context) error {
	if st.metrics == nil {
		if st.metricsLn != nil { // listening, the server not yet built
			_ = st.metricsLn.Close()
		}
		return nil
	}
	st.metricsStop()
	err := st.metrics.Shutdown(ctx)
	<-st.metricsWG
	if err != nil {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}
