package processor

import (
	"strings"

	"github.com/streamsub/streamsub/config"
)

// skipReason says why a response body is not rewritten; "" means rewrite.
// The values are metric label tokens (streamsub_bodies_skipped_total).
type skipReason string

const (
	rewrite             skipReason = ""
	skipNoRuleSet       skipReason = "no_rule_set"
	skipUnknownRuleSet  skipReason = "unknown_rule_set"
	skipHead            skipReason = "head_request"
	skipStatus          skipReason = "status_without_body"
	skipBadStatus       skipReason = "bad_status"
	skipNoBody          skipReason = "no_body"
	skipGRPC            skipReason = "grpc"
	skipContentType     skipReason = "content_type"
	skipContentEncoding skipReason = "content_encoding"
	skipTrailers        skipReason = "trailers"
)

// responseFacts is what the rewrite decision looks at, gathered from the
// request and response headers of one stream.
type responseFacts struct {
	method          string // request :method ("" when request headers were not seen)
	status          int    // response :status; 0 when absent or not a number
	contentType     string // response content-type, raw
	contentEncoding string // response content-encoding values joined with ","
	trailer         bool   // the response announces trailers (a trailer header)
	endOfStream     bool   // the response headers end the response: no body follows
	// anyContentType: the content type is not known and must not stop a
	// rewrite (a 304 usually has none; it stands for the 200's).
	anyContentType bool
}

// decide reports whether a response body is rewritten with rs, and if not,
// why. It is a pure function of its arguments (semantics.md "When a response
// is rewritten", design.md §2 on trailers).
func decide(rs *config.RuleSet, f responseFacts) skipReason {
	switch {
	case rs == nil:
		return skipNoRuleSet
	case f.endOfStream:
		return skipNoBody
	case strings.EqualFold(f.method, "HEAD"):
		return skipHead
	case f.status < 100 || f.status > 999:
		return skipBadStatus
	case f.status < 200 || f.status == 204 || f.status == 304:
		return skipStatus
	case isGRPC(f.contentType):
		return skipGRPC
	case !identityEncoding(f.contentEncoding):
		return skipContentEncoding
	case f.trailer:
		// Held-back bytes could never be flushed: with trailers no body
		// chunk carries end_of_stream.
		return skipTrailers
	case !f.anyContentType && !rs.AcceptsContentType(f.contentType):
		return skipContentType
	}
	return rewrite
}

// representsRewrite reports whether a response must carry the headers of
// a rewritten body (no content-length, last-modified per the rule set, a
// weak ETag): its body is rewritten (reason is rewrite), or it is a HEAD or
// a 304 whose GET, or 200, would be. A HEAD answer's headers are those a
// GET would get (RFC 9110 §9.3.2), and a 304 names the representation a
// 200 would send (§15.4.5): its ETag must match the weakened one the client
// holds. A 304 without a content-type is taken as the rule set's.
func representsRewrite(rs *config.RuleSet, f responseFacts, reason skipReason) bool {
	if reason == rewrite {
		return true
	}
	if rs == nil {
		return false
	}
	g, ok := f, false
	if strings.EqualFold(f.method, "HEAD") {
		g.method, ok = "GET", true
	}
	if f.status == 304 {
		g.status, ok = 200, true
		g.anyContentType = f.contentType == ""
	}
	if !ok {
		return false
	}
	g.endOfStream = false // a HEAD's or a 304's headers end it; a GET's would not
	return decide(rs, g) == rewrite
}

// isGRPC reports whether a content-type is gRPC's (application/grpc,
// application/grpc+proto, application/grpc-web, ...).
func isGRPC(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	const grpc = "application/grpc"
	return len(mt) >= len(grpc) && strings.EqualFold(mt[:len(grpc)], grpc)
}

// identityEncoding reports whether a content-encoding value (possibly a
// comma-separated list) leaves the body as is.
func identityEncoding(v string) bool {
	for tok := range strings.SplitSeq(v, ",") {
		tok = strings.TrimSpace(tok)
		if tok != "" && !strings.EqualFold(tok, "identity") {
			return false
		}
	}
	return true
}
