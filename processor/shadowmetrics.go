package processor

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamsub/streamsub/config"
)

// ShadowMetrics are the collectors of shadow rule sets (shadow.go). The
// rule_set label is the shadow rule set's name.
type ShadowMetrics struct {
	ShadowBodies       *prometheus.CounterVec   // by rule_set
	ShadowDiffering    *prometheus.CounterVec   // by rule_set
	ShadowReplacements *prometheus.CounterVec   // by rule_set, rule
	ShadowErrors       *prometheus.CounterVec   // by rule_set, reason
	ShadowChunkSeconds *prometheus.HistogramVec // by rule_set
}

func newShadowMetrics(reg prometheus.Registerer) ShadowMetrics {
	m := ShadowMetrics{
		ShadowBodies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_shadow_bodies_total",
			Help: "Sampled response bodies a shadow rule set saw to their end.",
		}, []string{"rule_set"}),
		ShadowDiffering: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_shadow_bodies_differing_total",
			Help: "Sampled response bodies for which the shadow rule set's output differs from the live output.",
		}, []string{"rule_set"}),
		ShadowReplacements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_shadow_replacements_total",
			Help: "Matches a shadow rule set replaced in its own output, by rule (name, or index when unnamed).",
		}, []string{"rule_set", "rule"}),
		ShadowErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_shadow_errors_total",
			Help: "Shadow rule set problems, by reason: cap_exceeded (its hold-back cap overflowed), panic. Responses are never affected.",
		}, []string{"rule_set", "reason"}),
		ShadowChunkSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "streamsub_shadow_chunk_processing_seconds",
			Help: "Time a shadow rule set took on one response body chunk, comparison included (on top of the live rule set's streamsub_chunk_processing_seconds).",
			// The live histogram's buckets, so the two compare.
			Buckets: prometheus.ExponentialBuckets(1e-6, 2, 15),
		}, []string{"rule_set"}),
	}
	if reg != nil {
		reg.MustRegister(m.ShadowBodies, m.ShadowDiffering, m.ShadowReplacements, m.ShadowErrors, m.ShadowChunkSeconds)
	}
	return m
}

// InitShadows creates the series of cfg's shadow rule sets at zero, every
// rule included, so that a shadow shows up in /metrics before its first
// body.
func (m *Metrics) InitShadows(cfg *config.Config) {
	for _, rs := range cfg.RuleSets {
		shadow := cfg.Shadow(rs)
		if shadow == nil {
			continue
		}
		m.ShadowBodies.WithLabelValues(shadow.Name)
		m.ShadowDiffering.WithLabelValues(shadow.Name)
		for _, reason := range []string{shadowCapExceeded, shadowPanic} {
			m.ShadowErrors.WithLabelValues(shadow.Name, reason)
		}
		for i := range shadow.Rules {
			m.ShadowReplacements.WithLabelValues(shadow.Name, ruleLabel(shadow, i))
		}
	}
}
