package headerrewrite

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/matcher"
)

var cloneRules = []matcher.Rule{
	{Name: "origin-url", Pattern: "https://www.example.com", Literal: true, Replace: "https://clone.example.net"},
	{Name: "origin-host", Pattern: "www.example.com", Literal: true, Replace: "clone.example.net"},
	{Name: "cookie-domain", Pattern: `(?i)(domain=)\.example\.com\b`, Replace: "${1}clone.example.net"},
	// Copies what follows "crlf:" up to ';', whatever it is.
	{Name: "copy", Pattern: `crlf:([^;]*)`, Replace: "copied:$1"},
	// Makes a value longer than the limit of the tests below.
	{Name: "grow", Pattern: "grow", Replace: strings.Repeat("g", 100)},
}

func compile(t testing.TB, rules []matcher.Rule) *matcher.RuleSet {
	t.Helper()
	rs, err := matcher.Compile(rules, matcher.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestRewrite(t *testing.T) {
	rw := New(DefaultResponseHeaders, compile(t, cloneRules), 64)
	tests := []struct {
		value  string
		want   string // "" when the value stays
		n      int
		reject Reject
	}{
		{"https://www.example.com/landing?ref=www.example.com", "https://clone.example.net/landing?ref=clone.example.net", 2, Accepted},
		{"a=1; Domain=.Example.com; Path=/", "a=1; Domain=clone.example.net; Path=/", 1, Accepted},
		{"a=1; Domain=.example.community", "", 0, Accepted},
		{"", "", 0, Accepted},
		// The match's own bytes carry the forbidden byte into the result.
		{"crlf:\r\nSet-Cookie: x=1", "", 1, ForbiddenByte},
		{"crlf:a\x00b", "", 1, ForbiddenByte},
		{"crlf:\n", "", 1, ForbiddenByte},
		// An unchanged value is never refused, whatever it carries.
		{"nothing\r\nhere", "", 0, Accepted},
		// 64 bytes are allowed, 65 are not.
		{"grow", "", 1, TooLong},
		{"crlf:" + strings.Repeat("x", 57), "copied:" + strings.Repeat("x", 57), 1, Accepted},
		{"crlf:" + strings.Repeat("x", 58), "", 1, TooLong},
		// Both: the forbidden byte is what is reported.
		{"grow crlf:\r", "", 2, ForbiddenByte},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.value), func(t *testing.T) {
			const prefix = "kept"
			out, n, reject := rw.Rewrite([]byte(prefix), []byte(tc.value))
			want := prefix + tc.want
			if string(out) != want || n != tc.n || reject != tc.reject {
				t.Errorf("got %q, %d, %q; want %q, %d, %q", out, n, reject, want, tc.n, tc.reject)
			}
		})
	}
}

func TestNames(t *testing.T) {
	rw := New([]string{"Location", "set-cookie", "LOCATION", "X-Custom"}, compile(t, cloneRules), 0)
	if got, want := strings.Join(rw.Names(), ","), "location,set-cookie,x-custom"; got != want {
		t.Errorf("Names() = %s, want %s", got, want)
	}
	if rw.MaxValueBytes() != DefaultMaxValueBytes {
		t.Errorf("MaxValueBytes() = %d, want the default %d", rw.MaxValueBytes(), DefaultMaxValueBytes)
	}
	for name, want := range map[string]bool{
		"location": true, "Location": true, "SET-COOKIE": true, "x-custom": true,
		"set-cookie2": false, "link": false, "": false, "x-custo": false,
	} {
		if got := rw.Applies(name); got != want {
			t.Errorf("Applies(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestCheckTemplate(t *testing.T) {
	tests := []struct {
		replace string
		err     string
	}{
		{"https://clone.example.net", ""},
		{"$1\t$2", ""},
		{"a\r\nb", `replacement template "a\r\nb": byte '\r' at offset 1 is not allowed in a header value`},
		{"$&\n", `replacement template "$&\n": byte '\n' at offset 2 is not allowed in a header value`},
		{"x\x00", `replacement template "x\x00": byte '\x00' at offset 1 is not allowed in a header value`},
	}
	for _, tc := range tests {
		err := CheckTemplate(tc.replace)
		if got := fmt.Sprint(err); (err == nil) != (tc.err == "") || (err != nil && got != tc.err) {
			t.Errorf("CheckTemplate(%q) = %v, want %q", tc.replace, err, tc.err)
		}
	}
}

// FuzzRewrite: any rules × any value × any limit, Rewrite never panics,
// never hands out a value with CR, LF or NUL or over the limit, and refuses
// exactly the results that break one of these.
//
// rules: records separated by 0x1e, each "F pattern 0x1f template"; F is
// 'l' literal, 'o' once, 'i' ignore case, anything else none.
func FuzzRewrite(f *testing.F) {
	for _, s := range []struct {
		rules string
		value string
		max   uint16
	}{
		{"-www\\.example\\.com\x1fclone.example.net", "https://www.example.com/x", 100},
		{"-x(.)y\x1f[$1]", "x\ry x\ny x\x00y", 100},
		{"l\r\x1fok", "a\rb", 100},
		{"-(?s).\x1f$&$&$&$&", "abc\x00", 8},
		{"o(a)\x1f\n\x1ei\x1f$0$0", "aAaA", 3},
		{"-^\x1f\r", "", 10},
	} {
		f.Add(s.rules, []byte(s.value), s.max)
	}
	f.Fuzz(func(t *testing.T, spec string, value []byte, max uint16) {
		var rules []matcher.Rule
		for rec := range strings.SplitSeq(spec, "\x1e") {
			if len(rec) == 0 {
				continue
			}
			pattern, replace, _ := strings.Cut(rec[1:], "\x1f")
			r := matcher.Rule{Pattern: pattern, Replace: replace}
			switch rec[0] {
			case 'l':
				r.Literal = true
			case 'o':
				r.Once = true
			case 'i':
				r.IgnoreCase = true
			}
			rules = append(rules, r)
		}
		if len(rules) > 4 || len(value) > 512 {
			return
		}
		rs, err := matcher.Compile(rules, matcher.Options{})
		if err != nil {
			return
		}
		limit := int(max%1024) + 1
		rw := New([]string{"location"}, rs, limit)
		const prefix = "p\r"
		out, n, reject := rw.Rewrite([]byte(prefix), value)
		whole, wantN := rs.RewriteValue(nil, value)
		if n != wantN {
			t.Fatalf("%d replacements, RewriteValue made %d", n, wantN)
		}
		if !bytes.HasPrefix(out, []byte(prefix)) {
			t.Fatalf("dst %q lost: got %q", prefix, out)
		}
		v := out[len(prefix):]
		if n == 0 || reject != Accepted {
			if len(v) != 0 {
				t.Fatalf("refused (n=%d, %q) but appended %q", n, reject, v)
			}
		} else {
			if bytes.IndexAny(v, "\r\n\x00") >= 0 || len(v) > limit {
				t.Fatalf("accepted %q (limit %d)", v, limit)
			}
			if !bytes.Equal(v, whole) {
				t.Fatalf("accepted %q, RewriteValue gives %q", v, whole)
			}
		}
		switch bad := bytes.IndexAny(whole, "\r\n\x00") >= 0; {
		case n == 0:
		case bad && reject != ForbiddenByte:
			t.Fatalf("%q carries a forbidden byte, reject %q", whole, reject)
		case !bad && len(whole) > limit && reject != TooLong:
			t.Fatalf("%q is %d > %d bytes, reject %q", whole, len(whole), limit, reject)
		case !bad && len(whole) <= limit && reject != Accepted:
			t.Fatalf("%q is safe, reject %q", whole, reject)
		}
	})
}
