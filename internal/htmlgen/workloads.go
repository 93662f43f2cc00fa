package htmlgen

import (
	"bytes"
	"fmt"
)

// Rule mirrors matcher.Rule field for field, so matcher.Rule(r) converts it.
type Rule struct {
	Name       string
	Pattern    string
	Literal    bool
	Replace    string
	IgnoreCase bool
	Once       bool
}

// Workload is a named rule set benchmarked over generated pages.
type Workload struct {
	Name  string
	Rules []Rule
}

// Clone is workload (a): the 10 rules a clone proxy applies to an origin's
// pages (origin URLs, analytics IDs, API key, brand, CDN, e-mails).
func Clone() Workload {
	return Workload{Name: "clone", Rules: []Rule{
		{Name: "origin-url", Pattern: `https?://(?:www\.)?example\.com`, Replace: "https://clone.example.net", IgnoreCase: true},
		{Name: "www-host", Pattern: `www\.example\.com`, Replace: "www.clone.example.net"},
		{Name: "ua-id", Pattern: `UA-12345-1`, Replace: "UA-99999-9"},
		{Name: "ga4-id", Pattern: `G-[A-Z0-9]{10}`, Replace: "G-CLONE00000"},
		{Name: "maps-key", Pattern: `AIza[0-9A-Za-z_-]{35}`, Replace: "AIzaCLONECLONECLONECLONECLONECLONECLO"},
		{Name: "brand", Pattern: `example corp`, Replace: "Clone Corp", IgnoreCase: true},
		{Name: "cdn-host", Pattern: `cdn\.example\.com`, Replace: "cdn.clone.example.net", IgnoreCase: true},
		{Name: "email", Pattern: `([a-z0-9._%+-]+)@example\.com`, Replace: "$1@clone.example.net"},
		{Name: "fb-pixel", Pattern: `fbq\('init', '[0-9]{15}'\)`, Replace: "fbq('init', '000000000000000')"},
		{Name: "gtm-id", Pattern: `GTM-[A-Z0-9]{4,9}`, Replace: "GTM-CLONE"},
	}}
}

// Literals is workload (b): 50 literal rules, some frequent in generated
// pages, most rare or absent (the shape of a legacy-URL / wording rule set).
func Literals() Workload {
	lits := []string{
		"example.com", "Example Corp", "UA-12345-1", "/products/widget-pro", "/blog/summer-sale",
		"customer", "delivery", "shipping", "Read more", "nav-link",
		"lorem ipsum", "googletagmanager.com", "partner-shop.org", "/pricing/", "data-tracking-id",
		"pageview", "noopener", "schema.org", "loading=\"lazy\"", "class=\"btn\"",
	}
	for i := len(lits); i < 50; i++ {
		lits = append(lits, fmt.Sprintf("legacy-path-%02d/old", i))
	}
	w := Workload{Name: "literals"}
	for i, l := range lits {
		w.Rules = append(w.Rules, Rule{Name: fmt.Sprintf("lit%02d", i), Pattern: l, Literal: true, Replace: fmt.Sprintf("[L%02d]", i)})
	}
	return w
}

// Regexes is workload (c): 10 regex rules with classes, alternations,
// bounded repeats and \b.
func Regexes() Workload {
	return Workload{Name: "regexes", Rules: []Rule{
		{Name: "hue", Pattern: `\b(?:colou?r|grey|gray)\b`, Replace: "hue"},
		{Name: "price", Pattern: `\$[0-9]{1,4}\.[0-9]{2}\b`, Replace: "EUR"},
		{Name: "phone", Pattern: `\b[0-9]{3}-[0-9]{3}-[0-9]{4}\b`, Replace: "000-000-0000"},
		{Name: "partner", Pattern: `\bhttps?://partner-[a-z]+\.(?:org|net)`, Replace: "https://partner.example.net", IgnoreCase: true},
		{Name: "weekday", Pattern: `\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)day\b`, Replace: "Weekday"},
		{Name: "comment", Pattern: `<!--[^>]{0,80}-->`, Replace: ""},
		{Name: "version", Pattern: `\bv[0-9]+\.[0-9]+(?:\.[0-9]+)?\b`, Replace: "vX"},
		{Name: "tracking", Pattern: `\bdata-track(?:ing)?-id="[a-z0-9]{6,12}"`, Replace: ""},
		{Name: "thing", Pattern: `\b(?:foo|bar|baz)[_-]?(?:widget|gadget)s?\b`, Replace: "thing"},
		{Name: "iban", Pattern: `[A-Z]{2}[0-9]{2}[A-Z0-9]{4}[0-9]{7}`, Replace: "IBAN"},
	}}
}

// ManyLiterals returns n distinct literal rules (the 1,000-literal
// pathological set): n-10 absent words plus 10 present in generated pages.
func ManyLiterals(n int) Workload {
	w := Workload{Name: fmt.Sprintf("literals%d", n)}
	present := []string{"customer", "delivery", "example.com", "Read more", "schema.org", "noopener", "lorem", "widget", "pageview", "shipping"}
	for i := range n {
		p := fmt.Sprintf("zq%03dx", i)
		if i < len(present) {
			p = present[i]
		}
		w.Rules = append(w.Rules, Rule{Pattern: p, Literal: true, Replace: "#"})
	}
	return w
}

// Pathological is one adversarial rule with the input that stresses it.
type Pathological struct {
	Name  string
	Rules []Rule
	Input []byte
}

// Pathologicals returns the adversarial cases, each with an input of n bytes:
// exponential-backtracking shapes, a rule that keeps a thread alive over
// the whole input, many literals, and a rule whose lazy DFA states thrash
// the cache.
func Pathologicals(n int) []Pathological {
	return []Pathological{
		{Name: "a-or-aa-star-b", Rules: []Rule{{Pattern: `(a|aa)*b`, Replace: "X"}}, Input: bytes.Repeat([]byte("a"), n)},
		{Name: "x+x+-plus-y", Rules: []Rule{{Pattern: `(x+x+)+y`, Replace: "X"}}, Input: bytes.Repeat([]byte("x"), n)},
		{Name: "letters-star-q", Rules: []Rule{{Pattern: `[a-z]*q`, Replace: "X"}}, Input: Letters(7, n)},
		{Name: "1000-literals", Rules: ManyLiterals(1000).Rules, Input: Page(7, n)},
		{Name: "dfa-state-thrash", Rules: []Rule{{Pattern: StateThrashRule, Replace: "X"}}, Input: StateThrash(7, n)},
	}
}
