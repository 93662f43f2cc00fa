package processor

import (
	"fmt"
	"testing"

	"github.com/streamsub/streamsub/config"
)

func TestDecide(t *testing.T) {
	html := &config.RuleSet{Name: "html", ContentTypes: []string{"text/html", "application/json"}}
	anyType := &config.RuleSet{Name: "any", ContentTypes: []string{"*"}}
	ok := responseFacts{method: "GET", status: 200, contentType: "text/html"}
	with := func(f func(*responseFacts)) responseFacts { r := ok; f(&r); return r }
	tests := []struct {
		rs   *config.RuleSet
		f    responseFacts
		want skipReason
	}{
		{html, ok, rewrite},
		{nil, ok, skipNoRuleSet},
		{html, with(func(f *responseFacts) { f.method = "HEAD" }), skipHead},
		{html, with(func(f *responseFacts) { f.method = "head" }), skipHead},
		{html, with(func(f *responseFacts) { f.method = "" }), rewrite}, // request headers not seen
		{html, with(func(f *responseFacts) { f.method = "POST"; f.status = 201 }), rewrite},
		{html, with(func(f *responseFacts) { f.status = 100 }), skipStatus},
		{html, with(func(f *responseFacts) { f.status = 101 }), skipStatus},
		{html, with(func(f *responseFacts) { f.status = 204 }), skipStatus},
		{html, with(func(f *responseFacts) { f.status = 304 }), skipStatus},
		{html, with(func(f *responseFacts) { f.status = 500 }), rewrite},
		{html, with(func(f *responseFacts) { f.status = 0 }), skipBadStatus},
		{html, with(func(f *responseFacts) { f.endOfStream = true }), skipNoBody},
		{html, with(func(f *responseFacts) { f.contentType = "text/html;charset=utf-8" }), rewrite},
		{html, with(func(f *responseFacts) { f.contentType = " Application/JSON " }), rewrite},
		{html, with(func(f *responseFacts) { f.contentType = "image/png" }), skipContentType},
		{html, with(func(f *responseFacts) { f.contentType = "" }), skipContentType},
		{anyType, with(func(f *responseFacts) { f.contentType = "" }), rewrite},
		{anyType, with(func(f *responseFacts) { f.contentType = "application/grpc" }), skipGRPC},
		{anyType, with(func(f *responseFacts) { f.contentType = "Application/gRPC-Web+proto" }), skipGRPC},
		{html, with(func(f *responseFacts) { f.contentEncoding = "gzip" }), skipContentEncoding},
		{html, with(func(f *responseFacts) { f.contentEncoding = "identity" }), rewrite},
		{html, with(func(f *responseFacts) { f.contentEncoding = "IDENTITY, " }), rewrite},
		{html, with(func(f *responseFacts) { f.contentEncoding = "identity,br" }), skipContentEncoding},
		{html, with(func(f *responseFacts) { f.trailer = true }), skipTrailers},
	}
	for _, tt := range tests {
		name := "nil"
		if tt.rs != nil {
			name = tt.rs.Name
		}
		t.Run(fmt.Sprintf("%s/%+v", name, tt.f), func(t *testing.T) {
			if got := decide(tt.rs, tt.f); got != tt.want {
				t.Errorf("decide = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWeakETag(t *testing.T) {
	tests := []struct {
		in, want      string
		strong, valid bool
	}{
		{`"abc"`, `W/"abc"`, true, true},
		{` "abc" `, `W/"abc"`, true, true},
		{`""`, `W/""`, true, true},
		{`W/"abc"`, `W/"abc"`, false, true},
		{`abc`, ``, false, false},
		{`"abc`, ``, false, false},
		{``, ``, false, false},
	}
	for _, tt := range tests {
		weak, strong, ok := weakETag([]byte(tt.in))
		if string(weak) != tt.want || strong != tt.strong || ok != tt.valid {
			t.Errorf("weakETag(%q) = %q, %v, %v; want %q, %v, %v", tt.in, weak, strong, ok, tt.want, tt.strong, tt.valid)
		}
	}
}

// TestRepresentsRewrite: a HEAD or a 304 carries the headers a GET or 200
// would (rewritten or not); anything else only when its body is rewritten.
func TestRepresentsRewrite(t *testing.T) {
	html := &config.RuleSet{Name: "html", ContentTypes: []string{"text/html"}}
	get := responseFacts{method: "GET", status: 200, contentType: "text/html"}
	with := func(f func(*responseFacts)) responseFacts { r := get; f(&r); return r }
	head := func(f *responseFacts) { f.method, f.endOfStream = "HEAD", true }
	notModified := func(f *responseFacts) { f.status, f.contentType, f.endOfStream = 304, "", true }
	tests := []struct {
		name string
		rs   *config.RuleSet
		f    responseFacts
		want bool
	}{
		{"rewritten GET", html, get, true},
		{"skipped GET", html, with(func(f *responseFacts) { f.contentType = "image/png" }), false},
		{"HEAD of a page", html, with(head), true},
		{"head (any case)", html, with(func(f *responseFacts) { head(f); f.method = "head" }), true},
		{"HEAD of an image", html, with(func(f *responseFacts) { head(f); f.contentType = "image/png" }), false},
		{"HEAD of a gzip page", html, with(func(f *responseFacts) { head(f); f.contentEncoding = "gzip" }), false},
		{"HEAD announcing trailers", html, with(func(f *responseFacts) { head(f); f.trailer = true }), false},
		{"HEAD of a 204", html, with(func(f *responseFacts) { head(f); f.status = 204 }), false},
		{"HEAD without rule set", nil, with(head), false},
		{"304 without content-type", html, with(notModified), true},
		{"304 of a page", html, with(func(f *responseFacts) { notModified(f); f.contentType = "text/html" }), true},
		{"304 of an image", html, with(func(f *responseFacts) { notModified(f); f.contentType = "image/png" }), false},
		{"304 of a gzip page", html, with(func(f *responseFacts) { notModified(f); f.contentEncoding = "gzip" }), false},
		{"304 without rule set", nil, with(notModified), false},
		{"304 to a HEAD", html, with(func(f *responseFacts) { notModified(f); f.method = "HEAD" }), true},
		{"204", html, with(func(f *responseFacts) { f.status, f.endOfStream = 204, true }), false},
		{"200 without body", html, with(func(f *responseFacts) { f.endOfStream = true }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := representsRewrite(tt.rs, tt.f, decide(tt.rs, tt.f)); got != tt.want {
				t.Errorf("representsRewrite(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
}
