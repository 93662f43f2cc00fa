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
