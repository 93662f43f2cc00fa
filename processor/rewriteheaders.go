package processor

import (
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/streamsub/streamsub/headerrewrite"
)

// Directions of header rewriting: label values of
// streamsub_header_replacements_total and the "direction" log attribute.
const (
	dirRequest  = "request"
	dirResponse = "response"
)

// headerChange is a header value rewriteHeaders changed: its new value is
// s.hdrBuf[lo:hi].
type headerChange struct {
	hv     *corev3.HeaderValue
	lo, hi int
}

// appendValue is HeaderValueOption.append = true. Envoy's ext_proc reads
// this deprecated field, not append_action: its APPEND_IF_EXISTS_OR_ADD is
// the enum's zero value, indistinguishable from unset, and unset means
// append false here, so each set replaced the one before and only the last
// of 50 set-cookie headers reached the client (seen with Envoy 1.40 in e2e
// TestHeaderRewriting before this was used).
var appendValue = wrapperspb.Bool(true)

// rewriteHeaders rewrites, with rw, the values of the headers it applies to
// (each value whole; none that s.removes or set already touch) and appends
// the mutations to set. For each name with a changed value, the name is
// added to s.removes and every value of it is appended again, in order,
// rewritten or not: Envoy applies the removals before the sets, so repeated
// headers (set-cookie) stay separate and ordered (e2e TestHeaderRewriting).
// A refused value (headerrewrite.Reject) stays as it is. rw may be nil.
func (s *stream) rewriteHeaders(rw *headerrewrite.Rewriter, dir string, headers []*corev3.HeaderValue, set []*corev3.HeaderValueOption) []*corev3.HeaderValueOption {
	if rw == nil {
		return set
	}
	s.hdrBuf, s.hdrChanges, s.hdrNames = s.hdrBuf[:0], s.hdrChanges[:0], s.hdrNames[:0]
	replaced := 0
	for _, hv := range headers {
		key := hv.GetKey()
		if !rw.Applies(key) || containsFold(s.removes, key) || setsName(set, key) {
			continue
		}
		start := len(s.hdrBuf)
		out, n, reject := rw.Rewrite(s.hdrBuf, value(hv))
		s.hdrBuf = out // longer only with a new value; its capacity is kept either way
		if reject != headerrewrite.Accepted {
			s.refuseHeader(dir, key, reject)
			continue
		}
		if n == 0 {
			continue
		}
		replaced += n
		s.hdrChanges = append(s.hdrChanges, headerChange{hv: hv, lo: start, hi: len(out)})
		s.hdrNames = appendName(s.hdrNames, key)
	}
	if replaced == 0 {
		return set
	}
	s.headerReplacements += replaced
	s.p.metrics.HeaderReplacements.WithLabelValues(s.rs.Name, dir).Add(float64(replaced))
	for _, name := range s.hdrNames {
		s.removes = append(s.removes, name)
		for _, hv := range headers {
			if !strings.EqualFold(hv.GetKey(), name) {
				continue
			}
			v := value(hv)
			for _, c := range s.hdrChanges {
				if c.hv == hv {
					v = s.hdrBuf[c.lo:c.hi]
					break
				}
			}
			set = append(set, &corev3.HeaderValueOption{
				Header: &corev3.HeaderValue{Key: hv.GetKey(), RawValue: v},
				Append: appendValue,
			})
		}
	}
	return set
}

// setsName reports whether set already sets the header called name.
func setsName(set []*corev3.HeaderValueOption, name string) bool {
	for _, o := range set {
		if strings.EqualFold(o.GetHeader().GetKey(), name) {
			return true
		}
	}
	return false
}

// refuseHeader counts a rewritten header value that is not sent, and logs
// the first of the stream (the header's name, never its value).
func (s *stream) refuseHeader(dir, name string, reason headerrewrite.Reject) {
	s.p.metrics.HeaderRejected.WithLabelValues(s.rs.Name, string(reason)).Inc()
	if s.headerRefusalLogged {
		return
	}
	s.headerRefusalLogged = true
	s.p.log.Warn("rewritten header value refused; the original value stays",
		"error", "header_rewrite_rejected", "reason", string(reason), "rule_set", s.rs.Name,
		"direction", dir, "header", name, "authority", s.authority, "path", s.path)
}
