package processor

// Shadow rule sets (README "Trying a rule set in shadow").
//
// A live rule set may have a shadow (config.Config.Shadow). For a sample of
// the responses whose body is streamed, the shadow also runs on every body
// chunk, after the live rule set, on the same bytes. Its output goes
// nowhere: it is compared, as it streams, with what the live rule set sent
// (bytediff.Stream, bounded memory), and at the end of the body streamsub
// counts the shadow's replacements rule by rule and whether its output
// would have differed, and logs, rate-limited, where the first difference
// was.
//
// What each side would send is what it sends as the live rule set: its
// rewrite when it rewrites the response's content type, else the body
// unchanged. A body is streamed when either side rewrites; when only the
// shadow does, the live side passes each chunk through unchanged.
//
// The shadow never changes a reply and never ends a stream: a panic in it
// is recovered and counted, its cap overflow is counted apart (its output
// then passes through, as a live rule set's would), and a body that ends
// without end_of_stream gives no verdict. Its cost is its own histogram.

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/internal/bytediff"
	"github.com/streamsub/streamsub/matcher"
)

// Reasons of streamsub_shadow_errors_total.
const (
	shadowCapExceeded = "cap_exceeded" // the shadow's hold-back cap overflowed
	shadowPanic       = "panic"        // the shadow panicked; it stopped for that body
)

const (
	// shadowExcerpt is the length of the excerpts the difference log shows
	// on each side of the first difference.
	shadowExcerpt = 48
	// shadowCompareLimit bounds the bytes by which one side's output may
	// run ahead of the other's while they are compared; past it they are
	// compared by hash (bytediff.Stream). It is four times the default
	// hold-back cap: while the two outputs agree, they drift apart by
	// about what one side holds back.
	shadowCompareLimit = 4 * matcher.DefaultMaxBufferedBytes
	// shadowLogInterval is the least time between two difference logs.
	shadowLogInterval = time.Second
)

// shadow is the shadow side of one stream's body. It is kept with the
// pooled stream, so its buffers and matcher stream are reused.
type shadow struct {
	active   bool            // runs on the current body
	rs       *config.RuleSet // the shadow rule set
	live     string          // the live rule set's name, for the log
	rewrite  bool            // rs rewrites this response (else its output is the input)
	ms       *matcher.Stream // when rewrite; made by msRS
	msRS     *matcher.RuleSet
	cmp      *bytediff.Stream
	out      []byte
	overflow bool
	seconds  prometheus.Observer
}

// startShadow decides, from the live decision and the response facts,
// whether the stream's shadow rule set runs on this body, and readies it.
// It reports whether the body must be streamed for the shadow alone (the
// live rule set skips it only for its content type).
func (s *stream) startShadow(f responseFacts, live skipReason) (stream bool) {
	if s.cfg == nil {
		return false
	}
	srs := s.cfg.Shadow(s.rs)
	if srs == nil {
		return false
	}
	shadowReason := decide(srs, f)
	if live != rewrite && !(live == skipContentType && shadowReason == rewrite) {
		return false // neither would rewrite, or for a reason that is not the rule set's
	}
	if !s.p.sampleShadow(s.cfg.ShadowSample) {
		return false
	}
	if s.sh == nil {
		s.sh = &shadow{cmp: bytediff.NewStream(shadowExcerpt, shadowCompareLimit)}
	}
	sh := s.sh
	sh.active, sh.rs, sh.live, sh.rewrite, sh.overflow = true, srs, s.rs.Name, shadowReason == rewrite, false
	sh.cmp.Reset()
	if cap(sh.out) > maxPooledBuffer {
		sh.out = nil // as the live output buffer: one huge chunk does not pin memory
	}
	if sh.rewrite {
		if sh.ms != nil && sh.msRS == srs.Compiled {
			sh.ms.Reset()
		} else {
			sh.ms, sh.msRS = srs.Compiled.NewStream(), srs.Compiled
		}
	}
	sh.seconds = s.p.metrics.ShadowChunkSeconds.WithLabelValues(srs.Name)
	return live != rewrite
}

// shadowWrite runs the shadow on the next chunk of the body, in segments,
// whose live output was live (in segments too), and at the end of the body
// (eos) reports what it saw.
func (s *stream) shadowWrite(chunk [][]byte, eos bool, live ...[]byte) {
	sh := s.sh
	if sh == nil || !sh.active {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			// The shadow's state may be broken: stop it for this body and
			// make a fresh matcher stream next time.
			sh.active, sh.ms, sh.msRS = false, nil, nil
			s.p.metrics.ShadowErrors.WithLabelValues(sh.rs.Name, shadowPanic).Inc()
			s.p.log.Error("shadow rule set panicked; it stopped for this body, the response is not affected",
				"rule_set", sh.rs.Name, "live_rule_set", sh.live, "panic", fmt.Sprint(r),
				"authority", s.authority, "path", s.path)
		}
	}()
	t0 := time.Now()
	// The comparison takes each side's bytes in pieces that need not line up.
	for _, b := range live {
		sh.cmp.Write(b, nil)
	}
	if sh.rewrite {
		out := sh.out[:0]
		for _, seg := range chunk {
			out = sh.ms.Write(out, seg)
		}
		if eos {
			out = sh.ms.Close(out)
		}
		sh.out = out
		sh.cmp.Write(nil, out)
	} else {
		// A shadow that does not rewrite this content type passes it through.
		for _, seg := range chunk {
			sh.cmp.Write(nil, seg)
		}
	}
	sh.seconds.Observe(time.Since(t0).Seconds())
	if sh.rewrite && !sh.overflow && sh.ms.Stats().Overflowed {
		sh.overflow = true
		s.p.metrics.ShadowErrors.WithLabelValues(sh.rs.Name, shadowCapExceeded).Inc()
	}
	if eos {
		s.shadowReport()
	}
}

// shadowReport counts a body the shadow saw to its end.
func (s *stream) shadowReport() {
	sh := s.sh
	sh.active = false
	m := s.p.metrics
	m.ShadowBodies.WithLabelValues(sh.rs.Name).Inc()
	if sh.rewrite {
		for i, n := range sh.ms.RuleReplacements() {
			if n > 0 {
				m.ShadowReplacements.WithLabelValues(sh.rs.Name, ruleLabel(sh.rs, i)).Add(float64(n))
			}
		}
	}
	d, differ := sh.cmp.Close()
	if !differ {
		return
	}
	m.ShadowDiffering.WithLabelValues(sh.rs.Name).Inc()
	if suppressed, ok := s.p.shadowLog.allow(time.Now()); ok {
		liveExcerpt, shadowExcerpt, _ := d.Excerpts()
		s.p.log.Info("shadow rule set output differs from the live output",
			"rule_set", sh.rs.Name, "live_rule_set", sh.live, "authority", s.authority, "path", s.path,
			"offset", d.Offset, "located", !d.Unlocated, "live", liveExcerpt, "shadow", shadowExcerpt,
			"suppressed", suppressed)
	}
}

// shadowFinish ends the shadow's body with the stream: a body cut short
// (no end_of_stream) gives no verdict.
func (s *stream) shadowFinish() {
	if s.sh != nil {
		s.sh.active, s.sh.rs = false, nil
	}
}

// ruleLabel is the rule label of rule i of rs in the shadow metrics: its
// name, or its index in the flattened rule set when it has none.
func ruleLabel(rs *config.RuleSet, i int) string {
	if name := rs.Rules[i].Name; name != "" {
		return name
	}
	return strconv.Itoa(i)
}

// sampleShadow reports whether the next response that a shadow could see
// is in the sample: with sample r, the n-th such response is when ⌊n·r⌋
// grows, so exactly ⌊N·r⌋ of the first N are, evenly spread. All shadows
// share one count.
func (p *Processor) sampleShadow(r float64) bool {
	if r >= 1 {
		return true
	}
	n := float64(p.shadowSeen.Add(1))
	return math.Floor(n*r) > math.Floor((n-1)*r)
}

// logLimiter lets one log line through per interval and counts the ones
// it held back. It is safe for concurrent use.
type logLimiter struct {
	interval   time.Duration
	next       atomic.Int64 // unix nanoseconds before which lines are held back
	suppressed atomic.Int64
}

// allow reports whether a line may be logged at now, and how many were
// held back since the last one that was.
func (l *logLimiter) allow(now time.Time) (suppressed int64, ok bool) {
	next := l.next.Load()
	if now.UnixNano() < next || !l.next.CompareAndSwap(next, now.Add(l.interval).UnixNano()) {
		l.suppressed.Add(1)
		return 0, false
	}
	return l.suppressed.Swap(0), true
}
