// Package htmlgen generates deterministic, realistic HTML pages and the
// rule-set workloads that streamsub's rewriter is benchmarked with.
//
// Pages look like the site pages a clone proxy rewrites: navigation links to
// the origin, CDN assets, analytics and tag-manager snippets, a tracking
// pixel, JSON-LD, e-mail addresses, prose, prices and tables. The same seed
// and size always give the same bytes, so benchmarks and the `apply`
// comparison need nothing downloaded and nothing in testdata.
//
// The package knows nothing of the matcher; its Rule has the same fields as
// matcher.Rule so callers convert with matcher.Rule(r).
package htmlgen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Page returns a page of exactly size bytes generated from seed.
func Page(seed uint64, size int) []byte {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	g.b.Grow(size + 4096)
	g.head()
	for g.b.Len() < size {
		g.section()
	}
	g.b.WriteString("</main><footer>© Example Corp. Contact <a href=\"mailto:info@example.com\">info@example.com</a></footer></body></html>\n")
	return g.b.Bytes()[:size]
}

type gen struct {
	r *rand.Rand
	b bytes.Buffer
}

var (
	words = strings.Fields(`the a of and to in for with on our your we you is are this that from by
		product service team customer quality delivery support order account price new best free today more
		about contact help shipping returns store online world company business solution design
		fast secure simple modern reliable trusted experience offer discover learn read view details
		lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore
		et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi
		color colour grey gray Monday Friday widget gadget v2.1 release notes version update`)
	paths = []string{"products", "blog", "about", "support", "pricing", "careers", "docs", "news", "shop", "account"}
	slugs = []string{"widget-pro", "gadget-mini", "summer-sale", "how-we-work", "release-2024", "faq", "team", "foo-widget", "bar_gadgets", "index"}
	users = []string{"info", "sales", "support", "jane.doe", "john_smith", "press", "hr+jobs", "no-reply", "billing", "webmaster"}
	hosts = []string{"https://www.example.com", "http://example.com", "https://example.com", "HTTPS://WWW.EXAMPLE.COM",
		"http://www.example.com", "https://partner-shop.org", "https://www.wikipedia.org", "https://github.com"}
	cdns = []string{"https://cdn.example.com", "//cdn.example.com", "https://CDN.Example.com", "https://static.other-cdn.net"}
)

const alnumUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
const keyChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

func (g *gen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *gen) chars(set string, n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteByte(set[g.r.IntN(len(set))])
	}
	return sb.String()
}

func (g *gen) digits(n int) string { return g.chars("0123456789", n) }

func (g *gen) url() string {
	return fmt.Sprintf("%s/%s/%s", g.pick(hosts), g.pick(paths), g.pick(slugs))
}

func (g *gen) text(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		switch g.r.IntN(60) {
		case 0:
			sb.WriteString([]string{"Example Corp", "example corp", "EXAMPLE CORP"}[g.r.IntN(3)])
		case 1:
			sb.WriteString(g.pick(users) + "@example.com")
		case 2:
			fmt.Fprintf(&sb, "$%d.%s", 1+g.r.IntN(999), g.digits(2))
		case 3:
			fmt.Fprintf(&sb, "%s-%s-%s", g.digits(3), g.digits(3), g.digits(4))
		default:
			sb.WriteString(g.pick(words))
		}
	}
	return sb.String()
}

func (g *gen) head() {
	b := &g.b
	fmt.Fprintf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>Example Corp — %s</title>\n", g.text(4))
	fmt.Fprintf(b, "<link rel=\"canonical\" href=\"%s\">\n", g.url())
	fmt.Fprintf(b, "<link rel=\"stylesheet\" href=\"%s/css/site.%s.css\">\n", g.pick(cdns), g.digits(6))
	g.analytics()
	b.WriteString("</head>\n<body><main>\n")
}

func (g *gen) analytics() {
	b := &g.b
	gid := "G-" + g.chars(alnumUpper, 10)
	fmt.Fprintf(b, "<script async src=\"https://www.googletagmanager.com/gtag/js?id=%s\"></script>\n", gid)
	fmt.Fprintf(b, "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}gtag('js',new Date());gtag('config','%s');\n", gid)
	b.WriteString("(function(i,s,o,g,r,a,m){i['GoogleAnalyticsObject']=r;i[r]=i[r]||function(){(i[r].q=i[r].q||[]).push(arguments)}})(window,document,'script','//www.google-analytics.com/analytics.js','ga');\nga('create', 'UA-12345-1', 'auto');ga('send', 'pageview');</script>\n")
	fmt.Fprintf(b, "<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});})(window,document,'script','dataLayer','GTM-%s');</script>\n", g.chars(alnumUpper, 4+g.r.IntN(6)))
	fmt.Fprintf(b, "<script>!function(f,b,e,v,n,t,s){if(f.fbq)return;n=f.fbq=function(){n.callMethod?n.callMethod.apply(n,arguments):n.queue.push(arguments)};}(window,document,'script');\nfbq('init', '%s');fbq('track', 'PageView');</script>\n", g.digits(15))
	fmt.Fprintf(b, "<script src=\"https://maps.googleapis.com/maps/api/js?key=AIza%s&callback=initMap\" defer></script>\n", g.chars(keyChars, 35))
}

func (g *gen) section() {
	b := &g.b
	switch g.r.IntN(12) {
	case 0:
		b.WriteString("<nav><ul>")
		for range 4 + g.r.IntN(6) {
			fmt.Fprintf(b, "<li><a href=\"%s\" class=\"nav-link\">%s</a></li>", g.url(), g.text(2))
		}
		b.WriteString("</ul></nav>\n")
	case 1:
		fmt.Fprintf(b, "<img src=\"%s/img/%s-%s.jpg\" alt=\"%s\" width=\"%d\" height=\"%d\" loading=\"lazy\">\n",
			g.pick(cdns), g.pick(slugs), g.digits(4), g.text(3), 100+g.r.IntN(900), 100+g.r.IntN(900))
	case 2:
		fmt.Fprintf(b, "<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\",\"@type\":\"Organization\",\"name\":\"Example Corp\",\"url\":\"https://www.example.com\",\"logo\":\"https://cdn.example.com/img/logo.png\",\"email\":\"%s@example.com\",\"telephone\":\"+1-%s-%s-%s\",\"sameAs\":[\"https://www.wikipedia.org/wiki/Example\",\"https://github.com/example\"]}</script>\n",
			g.pick(users), g.digits(3), g.digits(3), g.digits(4))
	case 3:
		b.WriteString("<table class=\"prices\"><tr><th>Item</th><th>Price</th><th>SKU</th></tr>")
		for range 3 + g.r.IntN(5) {
			fmt.Fprintf(b, "<tr><td>%s</td><td>$%d.%s</td><td>%s</td></tr>", g.text(2), 1+g.r.IntN(999), g.digits(2), g.chars(alnumUpper, 8))
		}
		b.WriteString("</table>\n")
	case 4:
		fmt.Fprintf(b, "<!-- build %s %s -->\n<div class=\"card\" data-tracking-id=\"%s\"><h3>%s</h3><p>%s</p><a href=\"%s\" class=\"btn\">Read more</a></div>\n",
			g.digits(8), g.text(3), strings.ToLower(g.chars(alnumUpper, 6+g.r.IntN(7))), g.text(3), g.text(25), g.url())
	case 5:
		fmt.Fprintf(b, "<script>var cfg={api:\"%s/api/v%d\",cdn:\"%s\",ua:\"UA-12345-1\",user:%d};document.querySelectorAll('a').forEach(function(a){if(a.href.indexOf('%s')<0){a.rel='noopener';}});</script>\n",
			g.pick(hosts), 1+g.r.IntN(3), g.pick(cdns), g.r.IntN(100000), g.pick(hosts))
	case 6:
		fmt.Fprintf(b, "<p class=\"contact\">Write to <a href=\"mailto:%s@example.com\">%s@example.com</a> or %s@partner-shop.org, call %s-%s-%s. IBAN %s%s%s%s.</p>\n",
			g.pick(users), g.pick(users), g.pick(users), g.digits(3), g.digits(3), g.digits(4), g.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 2), g.digits(2), g.chars(alnumUpper, 4), g.digits(7))
	default:
		fmt.Fprintf(b, "<p>%s <a href=\"%s\">%s</a> %s</p>\n", g.text(20+g.r.IntN(40)), g.url(), g.text(3), g.text(10+g.r.IntN(30)))
	}
}

// Letters returns n pseudo-random lowercase letters from seed, never 'q':
// the input for the pathological `[a-z]*q` rule.
func Letters(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	const set = "abcdefghijklmnoprstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return b
}

// StateThrashRule is the rule that StateThrash defeats: a lazy DFA state
// for it is the set of the last 23 positions that hold an a.
const StateThrashRule = `a[ab]{22}c`

// StateThrash returns n bytes of windows of 40 random a and b, each opened
// by an x: over them the lazy DFA of StateThrashRule meets about one new
// state per byte, so its cache fills, is cleared, and finally gives up (the
// fast path's worst case; the output is the input, no window holds a c).
func StateThrash(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	b := make([]byte, 0, n+40)
	for len(b) < n {
		b = append(b, 'x')
		for range 40 {
			b = append(b, "ab"[r.IntN(2)])
		}
	}
	return b[:n]
}
