package processor

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamsub/streamsub/headerrewrite"
)

// Metrics are the processor's Prometheus collectors. Label values are rule
// set names (bounded by the config) and the snake_case tokens of this
// package (skip reasons, error tokens).
type Metrics struct {
	Streams       prometheus.Counter
	ActiveStreams prometheus.Gauge
	Rewritten     *prometheus.CounterVec // by rule_set
	Skipped       *prometheus.CounterVec // by reason
	BytesIn       *prometheus.CounterVec // by rule_set
	BytesOut      *prometheus.CounterVec // by rule_set
	Replacements  *prometheus.CounterVec // by rule_set
	CapExceeded   *prometheus.CounterVec // by rule_set
	FastFallbacks *prometheus.CounterVec // by rule_set
	CacheGaveUp   *prometheus.CounterVec // by rule_set
	// HeaderReplacements counts matches replaced in header values, by
	// rule_set and direction (request, response); HeaderRejected counts
	// rewritten values refused, by rule_set and reason.
	HeaderReplacements *prometheus.CounterVec
	HeaderRejected     *prometheus.CounterVec
	Errors             *prometheus.CounterVec // by error token
	ChunkSeconds       prometheus.Histogram
	ShadowMetrics
	Remember *RememberMetrics // the memory of bodies no rule matched
}

// NewMetrics creates the processor's collectors and registers them with reg
// (unless reg is nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Streams: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamsub_streams_total",
			Help: "ext_proc Process streams started.",
		}),
		ActiveStreams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamsub_streams_active",
			Help: "ext_proc Process streams in progress.",
		}),
		Rewritten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_bodies_rewritten_total",
			Help: "Response bodies streamed through a rule set.",
		}, []string{"rule_set"}),
		Skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_bodies_skipped_total",
			Help: "Responses whose body was not rewritten, by reason.",
		}, []string{"reason"}),
		BytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_body_bytes_in_total",
			Help: "Response body bytes received from Envoy for rewriting.",
		}, []string{"rule_set"}),
		BytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_body_bytes_out_total",
			Help: "Rewritten response body bytes sent back to Envoy.",
		}, []string{"rule_set"}),
		Replacements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_replacements_total",
			Help: "Matches replaced in response bodies.",
		}, []string{"rule_set"}),
		CapExceeded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_stream_buffer_cap_exceeded_total",
			Help: "Bodies whose held-back bytes exceeded max_buffered_bytes; the rest passed through unchanged.",
		}, []string{"rule_set"}),
		FastFallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_fast_path_fallbacks_total",
			Help: "Hand-overs of a body from the lazy DFA fast path to the exact engine (a match across a chunk edge, a long window, a DFA cache that gave up).",
		}, []string{"rule_set"}),
		CacheGaveUp: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_dfa_cache_gave_up_total",
			Help: "Bodies in which a lazy DFA cache gave up (its states thrashed the memory budget); the rest of such a body runs on the exact engine.",
		}, []string{"rule_set"}),
		HeaderReplacements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_header_replacements_total",
			Help: "Matches replaced in header values (request headers before the origin, response headers before the client).",
		}, []string{"rule_set", "direction"}),
		HeaderRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_header_rewrites_rejected_total",
			Help: "Rewritten header values not sent (the original stayed): one carrying CR, LF or NUL, or longer than max_header_value_bytes.",
		}, []string{"rule_set", "reason"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_stream_errors_total",
			Help: "Process streams ended by an error, or body data lost, by error token.",
		}, []string{"error"}),
		ChunkSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "streamsub_chunk_processing_seconds",
			Help: "Time to rewrite one response body chunk (excluding gRPC send/receive).",
			// 1µs .. ~16ms: a 16 KiB chunk at 100 MB/s takes ~160µs.
			Buckets: prometheus.ExponentialBuckets(1e-6, 2, 15),
		}),
		Remember: newRememberMetrics(),
	}
	m.ShadowMetrics = newShadowMetrics(reg)
	for _, r := range skipReasons {
		m.Skipped.WithLabelValues(string(r))
	}
	for _, e := range errorTokens {
		m.Errors.WithLabelValues(e)
	}
	if reg != nil {
		reg.MustRegister(m.Streams, m.ActiveStreams, m.Rewritten, m.Skipped, m.BytesIn,
			m.BytesOut, m.Replacements, m.CapExceeded, m.FastFallbacks, m.CacheGaveUp, m.HeaderReplacements,
			m.HeaderRejected, m.Errors, m.ChunkSeconds)
		reg.MustRegister(m.Remember.collectors()...)
	}
	return m
}

// skipReasons and errorTokens are pre-created as labels so that dashboards
// see zeros rather than missing series.
var (
	skipReasons = []skipReason{skipNoRuleSet, skipUnknownRuleSet, skipHead, skipStatus,
		skipBadStatus, skipNoBody, skipGRPC, skipContentType, skipContentEncoding, skipTrailers, skipRememberedNoMatch}
	errorTokens = []string{errOutOfOrder, errUnknownMessage, errPanic, errRecv, errSend, errBodyLost, errAbandoned}
)

// InitRuleSets creates the per-rule-set series of names at zero, so that a
// freshly loaded rule set shows up in /metrics before its first body.
func (m *Metrics) InitRuleSets(names ...string) {
	for _, n := range names {
		m.Rewritten.WithLabelValues(n)
		m.BytesIn.WithLabelValues(n)
		m.BytesOut.WithLabelValues(n)
		m.Replacements.WithLabelValues(n)
		m.CapExceeded.WithLabelValues(n)
		m.FastFallbacks.WithLabelValues(n)
		m.CacheGaveUp.WithLabelValues(n)
		m.Remember.initRuleSet(n)
		for _, dir := range []string{dirRequest, dirResponse} {
			m.HeaderReplacements.WithLabelValues(n, dir)
		}
		for _, r := range headerrewrite.Rejects {
			m.HeaderRejected.WithLabelValues(n, string(r))
		}
	}
}
