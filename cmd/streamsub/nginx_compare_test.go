package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/config/load"
	"github.com/streamsub/streamsub/internal/bytediff"
	"github.com/streamsub/streamsub/internal/nginxrun"
	"github.com/streamsub/streamsub/nginximport"
	"github.com/streamsub/streamsub/nginxparse"
)

// compareTree is the nginx configuration tree TestImportMatchesNginx runs
// and imports, and pages/HOST/PATH the bodies its origin serves.
const compareTree = "testdata/nginx-compare"

// originChunk is the size of the pieces the test origin writes, each
// flushed: nginx's filters see a page in many reads, and so does the
// rewriter here.
const originChunk = 700

// comparePage is one request of TestImportMatchesNginx.
type comparePage struct {
	host, path string
	// ruleSet is the rule set streamsub applies to the request: "" for the
	// one the hosts map gives host; a location of its own is chosen by
	// name (Envoy's x-streamsub-ruleset metadata).
	ruleSet string
	// rewritten: nginx changes the body (a setup that rewrites nothing
	// would compare nothing).
	rewritten bool
}

var comparePages = []comparePage{
	{"mall.example.com", "/index.html", "", true},
	{"mall.example.com", "/index.html?repeat=60", "", true},
	{"www.mall.example.com", "/style.css", "", true},
	{"mall.example.com", "/app.js", "", false},
	{"mall.example.com", "/promo/sale.html", "mall.example.com location /promo/", true},
	{"mall.example.com", "/legacy/old.html", "mall.example.com location /legacy/", true},
	{"blog.example.com", "/index.html", "", true},
	{"blog.example.com", "/index.html?repeat=60", "", true},
	{"blog.example.com", "/style.css", "", true},
	{"blog.example.com", "/feed/index.xml", "blog.example.com location /feed/", true},
	{"blog.example.com", "/search/results.html", "blog.example.com location /search/", true},
	{"blog.example.com", "/old/post.html", "blog.example.com location /old/", true},
	{"blog.example.com", "/archive/2019.html", "blog.example.com location /archive/", true},
	{"news.example.com", "/index.html", "", true},
	{"news.example.com", "/wire/story.html", "news.example.com location /wire/", true},
	{"news.example.com", "/types/data.json", "news.example.com location /types/", true},
}

// TestImportMatchesNginx runs the real nginx, with sub_filter and the
// subs_filter module, on the configuration tree of testdata/nginx-compare,
// fetches pages through it from an origin on loopback, imports the same
// tree with `streamsub import-nginx`, and rewrites each origin body with
// the rule set streamsub would apply. Where the import reported no warning
// about how that rule set's rules rewrite (Diagnostic.Affects), the output
// must be nginx's byte for byte; where it warned, whether they differ is
// logged, not judged. The pages streamsub reproduces then become tests
// through `import-nginx -examples`, which `check` runs in eight chunkings;
// a warned page that differs must make -examples fail and name the warning.
// Skipped without nginx and the module (failed under CI=true: make test
// installs them).
func TestImportMatchesNginx(t *testing.T) {
	nginx, module := nginxrun.Binaries(t)
	origin := httptest.NewServer(http.HandlerFunc(serveComparePage))
	defer origin.Close()
	dir := t.TempDir()
	listen := nginxrun.FreeAddr(t)
	conf := copyCompareTree(t, dir, strings.NewReplacer("@DIR@", dir, "@LISTEN@", listen,
		"@ORIGIN@", origin.Listener.Addr().String(), "@SUBS_MODULE@", module))
	srv := nginxrun.Start(t, nginx, dir, conf)
	srv.WaitListening(t, "tcp", listen)

	imported := filepath.Join(dir, "streamsub.yaml")
	if code, _, errOut := runImportNginxWith("-o", imported, conf); code != 0 {
		t.Fatalf("import-nginx: exit %d\n%s", code, errOut)
	}
	cfg, err := load.File(imported)
	if err != nil {
		t.Fatal(err)
	}
	// The same import as a value, for the rule sets each warning affects.
	res, err := nginximport.Import(nginxparse.OS, conf)
	if err != nil {
		t.Fatal(err)
	}

	examples := map[string]string{} // rule set → examples directory
	var identical, warnedSame, warnedDiffer []string
	var differing *comparedPage
	for _, p := range comparePages {
		c := comparePageWith(t, p, origin.URL, "http://"+listen, cfg, res)
		where := p.host + p.path
		if c.rewritten != p.rewritten {
			t.Errorf("%s: nginx rewrote it: %v, want %v", where, c.rewritten, p.rewritten)
		}
		d, differ := bytediff.Compare(c.nginx, c.streamsub, 40)
		switch {
		case !differ && c.warnings == nil:
			identical = append(identical, where)
		case !differ:
			warnedSame = append(warnedSame, where)
		case c.warnings == nil:
			t.Errorf("%s (rule set %q): streamsub's output differs from nginx's, and the import warned of nothing: %s",
				where, c.ruleSet, d.Format("nginx", "streamsub"))
			continue
		default:
			warnedDiffer = append(warnedDiffer, where)
			t.Logf("%s (rule set %q): differs from nginx, as the import warned (%s): %s",
				where, c.ruleSet, strings.Join(c.warnings, "; "), d.Format("nginx", "streamsub"))
			if differing == nil {
				differing = &c
			}
			continue
		}
		ex := examples[c.ruleSet]
		if ex == "" {
			ex = t.TempDir()
			examples[c.ruleSet] = ex
		}
		writeIn(t, ex, c.name+".input"+c.ext, string(c.origin))
		writeIn(t, ex, c.name+".expected"+c.ext, string(c.nginx))
	}
	t.Logf("%d pages through nginx (%d rules in %d rule sets imported): %d byte-identical with no warning about their rule set, "+
		"%d identical though warned %q, %d differ as warned %q",
		len(comparePages), res.Rules, res.RuleSets, len(identical), len(warnedSame), warnedSame, len(warnedDiffer), warnedDiffer)
	if len(identical) == 0 {
		t.Error("no page compared without a warning")
	}

	// The pages streamsub reproduces, as tests of their rule sets.
	for set, ex := range examples {
		out := filepath.Join(dir, "examples.yaml")
		code, _, errOut := runImportNginxWith("-o", out, "-examples", ex, "-examples-rule-set", set, conf)
		if code != 0 {
			t.Errorf("import-nginx -examples for rule set %q: exit %d\n%s", set, code, errOut)
			continue
		}
		var checkOut, checkErr bytes.Buffer
		if code := check([]string{"-config", out}, &checkOut, &checkErr); code != 0 || !strings.Contains(checkOut.String(), "test(s) passed") {
			t.Errorf("check of the examples of rule set %q: exit %d\n%s%s", set, code, checkOut.String(), checkErr.String())
		}
	}
	// A page that differs as warned: -examples refuses it and names the warning.
	if differing != nil {
		ex := t.TempDir()
		writeIn(t, ex, differing.name+".input"+differing.ext, string(differing.origin))
		writeIn(t, ex, differing.name+".expected"+differing.ext, string(differing.nginx))
		code, _, errOut := runImportNginxWith("-examples", ex, "-examples-rule-set", differing.ruleSet, conf)
		want := fmt.Sprintf("the import warned that rule set %q may rewrite bodies differently from nginx", differing.ruleSet)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("import-nginx -examples with a page that differs: exit %d, want 2 and %q in:\n%s", code, want, errOut)
		}
	}
}

// comparedPage is a page fetched from the origin and through nginx, and
// rewritten by streamsub.
type comparedPage struct {
	name, ext                string // as an example: NAME.input.EXT
	ruleSet                  string
	origin, nginx, streamsub []byte
	rewritten                bool     // nginx's body is not the origin's
	warnings                 []string // the import's warnings about the rule set, by position
}

// comparePageWith fetches p from the origin and through nginx, and
// rewrites the origin's body with the rule set of cfg that streamsub
// applies to p (when it takes the response's content type), in the pieces
// the origin wrote.
func comparePageWith(t *testing.T, p comparePage, originURL, nginxURL string, cfg *config.Config, res *nginximport.Result) comparedPage {
	t.Helper()
	body, ct := fetch(t, originURL, p)
	viaNginx, _ := fetch(t, nginxURL, p)
	rs := cfg.RuleSetForHost(p.host)
	if p.ruleSet != "" {
		rs = cfg.RuleSet(p.ruleSet)
	}
	if rs == nil {
		t.Fatalf("%s%s: no rule set %q in the import", p.host, p.path, p.ruleSet)
	}
	c := comparedPage{ruleSet: rs.Name, origin: body, nginx: viaNginx, streamsub: body, rewritten: !bytes.Equal(body, viaNginx)}
	if rs.AcceptsContentType(ct) {
		st := rs.Compiled.NewStream()
		var out []byte
		for b := body; len(b) > 0; b = b[min(originChunk, len(b)):] {
			out = st.Write(out, b[:min(originChunk, len(b))])
		}
		c.streamsub = st.Close(out)
	}
	for _, w := range res.Warnings {
		for _, s := range w.Affects {
			if s == rs.Name {
				c.warnings = append(c.warnings, w.Pos.String())
			}
		}
	}
	file, query, _ := strings.Cut(p.path, "?")
	c.ext = path.Ext(file)
	c.name = strings.NewReplacer("/", "-", "=", "").Replace(strings.TrimPrefix(strings.TrimSuffix(file, c.ext), "/"))
	if query != "" {
		c.name += "-" + strings.NewReplacer("=", "").Replace(query)
	}
	return c
}

// fetch GETs p from the server at base with p's host, and returns the
// body and content type of its 200 response.
func fetch(t *testing.T, base string, p comparePage) ([]byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+p.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = p.host
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s%s (host %s): %s\n%s", base, p.path, p.host, resp.Status, body)
	}
	return body, resp.Header.Get("Content-Type")
}

// comparePageTypes are the content types of the origin's pages by
// extension, those import-nginx -examples gives the same extensions.
var comparePageTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css",
	".js":   "application/javascript",
	".json": "application/json",
	".xml":  "application/xml",
}

// serveComparePage serves testdata/nginx-compare/pages/HOST/PATH (HOST
// without a leading "www."), the page
// repeated ?repeat=N times (at most 1000), in flushed pieces of
// originChunk bytes.
func serveComparePage(w http.ResponseWriter, r *http.Request) {
	host, _, _ := strings.Cut(r.Host, ":")
	host = strings.TrimPrefix(host, "www.")
	page, err := os.ReadFile(filepath.Join(compareTree, "pages", filepath.Base(host), filepath.FromSlash(path.Clean(r.URL.Path))))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("repeat")); err == nil && n > 0 && n <= 1000 {
		page = bytes.Repeat(page, n)
	}
	w.Header().Set("Content-Type", comparePageTypes[path.Ext(r.URL.Path)])
	for len(page) > 0 {
		n := min(originChunk, len(page))
		w.Write(page[:n])
		w.(http.Flusher).Flush()
		page = page[n:]
	}
}

// copyCompareTree copies the configuration files of compareTree (not its
// pages) into dir with the replacements of r, and returns the path of the
// main file.
func copyCompareTree(t *testing.T, dir string, r *strings.Replacer) string {
	t.Helper()
	err := filepath.WalkDir(compareTree, func(src string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(compareTree, src)
		if err != nil || strings.HasPrefix(rel, "pages"+string(filepath.Separator)) {
			return err
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, "conf", rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(r.Replace(string(data))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "conf", "nginx.conf")
}
