package processor

// The memory of bodies no rule matched (config.Remember, design.md §1):
// static files rarely change and most match no rule, so a response whose
// last body matched nothing, and whose validator is unchanged, is skipped
// like any other (mode override NONE): its body never leaves Envoy.
//
// An entry is keyed by the compiled rule set (a weak pointer: a reload
// compiles new rule sets, so a reload starts afresh, and old entries keep
// no rule set alive), the :authority and the :path, and holds the
// response's validator and the bitmap of the rules that matched its body
// (from matcher.Stream.RuleReplacements: a rule that matched replaced at
// least once, since a once rule's first match replaces; nil when none
// did). It is written at the end of every rewritten body that was searched
// to its end, and read at the next response headers.
//
// A rule set with a shadow is left out: the shadow is there to see its
// traffic.

import (
	"strings"
	"sync"
	"sync/atomic"
	"weak"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/matcher"
	"github.com/streamsub/streamsub/processor/internal/lru"
)

// skipRememberedNoMatch: the memory says no rule matched this response's
// body the last time, and its validator is unchanged.
const skipRememberedNoMatch skipReason = "remembered_no_match"

// maxRememberedBytes bounds the :authority, :path and validator of a
// remembered response together, so that an entry's size is bounded too;
// longer ones are not remembered.
const maxRememberedBytes = 2048

// memKey names what a remembered body was: the rule set that searched it,
// the host and the path it came from.
type memKey struct {
	rules     weak.Pointer[matcher.RuleSet]
	authority string
	path      string
}

// memEntry is what is remembered of a body.
type memEntry struct {
	validator string   // see validatorOf
	matched   []uint64 // bit r%64 of word r/64: rule r matched; nil when none did
}

// memory is the processor's memory, shared by its streams. Its settings
// come from the config each stream starts with; they are applied when a
// stream brings a config the memory has not seen yet.
type memory struct {
	mu          sync.Mutex                                  // held while the settings change
	seen        atomic.Pointer[config.Config]               // the config the settings come from
	cache       atomic.Pointer[lru.Cache[memKey, memEntry]] // nil: off
	verifyOneIn atomic.Uint64                               // 0: never verify
	skips       atomic.Uint64                               // remembered skips so far, for the verification sample
}

// forConfig returns the memory's cache with cfg's settings, or nil when
// cfg turns it off.
func (m *memory) forConfig(cfg *config.Config, met *RememberMetrics) *lru.Cache[memKey, memEntry] {
	if m.seen.Load() != cfg {
		m.configure(cfg, met)
	}
	return m.cache.Load()
}

// configure applies cfg's settings. A new limit keeps what fits; turning
// the memory off forgets everything.
func (m *memory) configure(cfg *config.Config, met *RememberMetrics) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen.Load() == cfg {
		return
	}
	r := cfg.Remember
	switch c := m.cache.Load(); {
	case r.Entries == 0:
		m.cache.Store(nil)
		met.Entries.Set(0)
	case c == nil:
		m.cache.Store(lru.New[memKey, memEntry](r.Entries, r.TTL, nil))
	default:
		met.Evictions.Add(float64(c.SetLimits(r.Entries, r.TTL)))
		met.Entries.Set(float64(c.Len()))
	}
	m.verifyOneIn.Store(uint64(r.VerifyOneIn))
	m.seen.Store(cfg)
}

// verifyNext reports whether this remembered skip is the one in
// verify_one_in that is streamed anyway.
func (m *memory) verifyNext() bool {
	n := m.verifyOneIn.Load()
	return n > 0 && m.skips.Add(1)%n == 0
}

// recall is one stream's part in the memory.
type recall struct {
	cache     *lru.Cache[memKey, memEntry] // nil: the body is not remembered
	key       memKey
	validator string
	verifying bool // the memory would have skipped this body
}

// recallSkip is the memory's say in the decision of the response headers:
// a body that would be rewritten is skipped when the memory says no rule
// matched the last body of this rule set, host and path, and the
// validator is the same. A body that is streamed and can be remembered is
// noted, for rememberBody.
func (s *stream) recallSkip(reason skipReason, f responseFacts, headers []*corev3.HeaderValue) skipReason {
	if reason != rewrite || f.status != 200 || !strings.EqualFold(f.method, "GET") || s.authority == "" ||
		s.cfg.Shadow(s.rs) != nil {
		return reason
	}
	cache := s.p.memory.forConfig(s.cfg, s.p.metrics.Remember)
	if cache == nil {
		return reason
	}
	v := validatorOf(headers)
	if v == "" || len(s.authority)+len(s.path)+len(v) > maxRememberedBytes {
		return reason
	}
	s.recall = recall{cache: cache, key: memKey{weak.Make(s.rs.Compiled), s.authority, s.path}, validator: v}
	e, ok := cache.Get(s.recall.key)
	if !ok || e.validator != v || e.matched != nil {
		return reason
	}
	if s.p.memory.verifyNext() {
		s.recall.verifying = true
		s.p.metrics.Remember.Verified.WithLabelValues(s.rs.Name).Inc()
		return reason
	}
	return skipRememberedNoMatch
}

// remembersNoMatch reports whether the memory says that no rule matched
// the last body of this rule set, host and path, whose validator was the
// one in headers: a GET would then be skipped with the origin's headers,
// so a HEAD or a 304 must keep them as well. It reads the memory only.
func (s *stream) remembersNoMatch(headers []*corev3.HeaderValue) bool {
	if s.rs == nil || s.authority == "" || s.cfg.Shadow(s.rs) != nil {
		return false
	}
	cache := s.p.memory.forConfig(s.cfg, s.p.metrics.Remember)
	v := validatorOf(headers)
	if cache == nil || v == "" {
		return false
	}
	e, ok := cache.Get(memKey{weak.Make(s.rs.Compiled), s.authority, s.path})
	return ok && e.validator == v && e.matched == nil
}

// rememberBody records, at the end of a rewritten body noted by
// recallSkip, which rules matched it. A body that overflowed the hold-back
// cap was not searched to its end and is not remembered.
func (s *stream) rememberBody() {
	r := &s.recall
	if r.cache == nil || s.ms.Stats().Overflowed {
		return
	}
	matched := matchedRules(s.ms.RuleReplacements())
	met := s.p.metrics.Remember
	if r.verifying && matched != nil {
		met.Wrong.WithLabelValues(s.rs.Name).Inc()
		s.p.log.Warn("remembered that no rule matched, but one did: the body changed and its validator did not",
			"rule_set", s.rs.Name, "authority", s.authority, "path", s.path, "validator", r.validator)
	}
	if r.cache.Put(r.key, memEntry{validator: r.validator, matched: matched}) {
		met.Evictions.Inc()
	}
	met.Entries.Set(float64(r.cache.Len()))
}

// matchedRules returns the bitmap of the rules that replaced anything, or
// nil when none did.
func matchedRules(replacements []int) []uint64 {
	var bits []uint64
	for r, n := range replacements {
		if n > 0 {
			if bits == nil {
				bits = make([]uint64, (len(replacements)+63)/64)
			}
			bits[r/64] |= 1 << (r % 64)
		}
	}
	return bits
}

// validatorOf returns what tells versions of a response's body apart: its
// etag, strong or weak, else its last-modified and content-length
// together; "" when it has neither.
func validatorOf(headers []*corev3.HeaderValue) string {
	var etag, modified, length []byte
	for _, hv := range headers {
		switch key := hv.GetKey(); {
		case strings.EqualFold(key, "etag"):
			etag = value(hv)
		case strings.EqualFold(key, "last-modified"):
			modified = value(hv)
		case strings.EqualFold(key, "content-length"):
			length = value(hv)
		}
	}
	switch {
	case len(etag) > 0:
		return "etag " + string(etag)
	case len(modified) > 0 && len(length) > 0:
		return "last-modified " + string(modified) + ", content-length " + string(length)
	}
	return ""
}

// RememberMetrics are the memory's collectors.
type RememberMetrics struct {
	Entries   prometheus.Gauge
	Evictions prometheus.Counter
	Verified  *prometheus.CounterVec // by rule_set
	Wrong     *prometheus.CounterVec // by rule_set
}

func newRememberMetrics() *RememberMetrics {
	return &RememberMetrics{
		Entries: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streamsub_remembered_entries",
			Help: "Responses remembered (rule set, host and path: the rules that matched the last body), expired ones included until dropped.",
		}),
		Evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streamsub_remembered_evictions_total",
			Help: "Remembered responses forgotten to stay within remember.entries.",
		}),
		Verified: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_remembered_verified_total",
			Help: "Responses the memory would have skipped, streamed anyway to check it (remember.verify_one_in).",
		}, []string{"rule_set"}),
		Wrong: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streamsub_remembered_wrong_total",
			Help: "Checked responses in which a rule matched although the memory said none would: the body changed and its validator did not.",
		}, []string{"rule_set"}),
	}
}

func (m *RememberMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Entries, m.Evictions, m.Verified, m.Wrong}
}

func (m *RememberMetrics) initRuleSet(name string) {
	m.Verified.WithLabelValues(name)
	m.Wrong.WithLabelValues(name)
}
