package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Label values of streamsub_config_reloads_total.
const (
	reloadOK     = "ok"
	reloadFailed = "failed"
)

// metrics are the server's own collectors; the processor registers its own.
type metrics struct {
	reloads      *prometheus.CounterVec // by result
	lastReloadOK prometheus.Gauge
	loadedAt     prometheus.Gauge

	streamsRefused    prometheus.Counter // -max-streams reached
	streamsIdleClosed prometheus.Counter // -stream-idle-timeout
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_config_reloads_total",
			Help: "Config reloads (SIGHUP, file change or Reload), by result: ok or failed.",
		}, []string{"result"}),
		lastReloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamsub_config_last_reload_successful",
			Help: "1 if the last config load succeeded, 0 if it failed (the previous config is still in use).",
		}),
		loadedAt: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamsub_config_loaded_timestamp_seconds",
			Help: "Unix time the config in use was loaded.",
		}),
		streamsRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamsub_streams_refused_total",
			Help: "gRPC streams refused with RESOURCE_EXHAUSTED because -max-streams streams were open.",
		}),
		streamsIdleClosed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamsub_streams_idle_closed_total",
			Help: "Process streams ended with DEADLINE_EXCEEDED after receiving nothing for -stream-idle-timeout.",
		}),
	}
	m.reloads.WithLabelValues(reloadOK)
	m.reloads.WithLabelValues(reloadFailed)
	reg.MustRegister(m.reloads, m.lastReloadOK, m.loadedAt, m.streamsRefused, m.streamsIdleClosed,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
