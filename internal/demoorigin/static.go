package demoorigin

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"net/http"
	"sync"
)

// StaticSize is the size of /static/app.css and /static/app.js.
const StaticSize = 64 << 10

// A static file: its body, content type and strong ETag.
type staticFile struct {
	body  []byte
	ctype string
	etag  string
}

// static holds the files of /static/, built on first use. Their text
// carries no demo match: they are the files a rule set would stream for
// nothing, which streamsub remembers (the config's remember section).
var static = sync.OnceValue(func() map[string]staticFile {
	css := fill("/* app.css: generated stylesheet */\n", "/*", "*/\n", func(i int) string {
		return fmt.Sprintf(".c%d { margin: %dpx %dpx; color: #%06x; }\n", i, i%17, i%5, i*2654435761%0xffffff)
	})
	js := fill("// app.js: generated script\n", "//", "\n", func(i int) string {
		return fmt.Sprintf("function f%d(x) { return x * %d + %d; }\n", i, i%97, i%13)
	})
	return map[string]staticFile{
		"app.css": {body: css, ctype: "text/css; charset=utf-8", etag: etagOf(css)},
		"app.js":  {body: js, ctype: "application/javascript", etag: etagOf(js)},
	}
})

// fill returns head, then line(0), line(1), ... while they fit in
// StaticSize, then a comment (open, padding, close) to make it exactly
// StaticSize bytes.
func fill(head, open, close string, line func(int) string) []byte {
	b := bytes.NewBufferString(head)
	for i := 0; ; i++ {
		l := line(i)
		if b.Len()+len(l)+len(open)+len(close) > StaticSize {
			break
		}
		b.WriteString(l)
	}
	b.WriteString(open)
	b.Write(bytes.Repeat([]byte{' '}, StaticSize-b.Len()-len(close)))
	b.WriteString(close)
	return b.Bytes()
}

func etagOf(body []byte) string {
	h := fnv.New64a()
	h.Write(body)
	return fmt.Sprintf(`"%016x"`, h.Sum64())
}

// StaticFile returns the body and the strong ETag of /static/name
// ("app.css" or "app.js"), or nil.
func StaticFile(name string) (body []byte, etag string) {
	f, ok := static()[name]
	if !ok {
		return nil, ""
	}
	return f.body, f.etag
}

func staticRoute(w http.ResponseWriter, r *http.Request) {
	f, ok := static()[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.ctype)
	w.Header().Set("ETag", f.etag)
	// ServeContent sets Last-Modified and Content-Length and answers
	// If-None-Match, If-Modified-Since and Range.
	http.ServeContent(w, r, "", Modified, bytes.NewReader(f.body))
}
