package processor

import (
	"bytes"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/streamsub/streamsub/matcher"
)

// value returns a header's value. Envoy sends it in raw_value; value is read
// only as a fallback for data planes that still fill the old field.
func value(h *corev3.HeaderValue) []byte {
	if len(h.RawValue) > 0 {
		return h.RawValue
	}
	return []byte(h.Value)
}

// removable reports whether Envoy can remove a header at all: it ignores
// attempts to remove pseudo-headers and host.
func removable(key string) bool {
	return key != "" && key[0] != ':' && !strings.EqualFold(key, "host")
}

// appendInternal appends to dst the names in headers that hs recognises,
// each once whatever its case or how often it repeats (one remove_headers
// entry removes every value of a name), never a name Envoy cannot remove,
// and returns dst.
func appendInternal(dst []string, headers []*corev3.HeaderValue, hs *matcher.HeaderSet) []string {
	if hs == nil {
		return dst
	}
	start := len(dst)
	dst = matcher.AppendMatching(hs, dst, headers, (*corev3.HeaderValue).GetKey)
	w := start
	for _, key := range dst[start:] {
		if removable(key) && !containsFold(dst[:w], key) {
			dst[w] = key
			w++
		}
	}
	return dst[:w]
}

// appendName appends name to dst unless it is there already (ignoring case).
func appendName(dst []string, name string) []string {
	if containsFold(dst, name) {
		return dst
	}
	return append(dst, name)
}

func containsFold(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// weakETag returns the weak form of a strong entity tag ("abc" → W/"abc"),
// and whether the tag was strong. A weak tag is returned as is; a value that
// is not an entity tag at all is reported with ok=false and strong=false.
func weakETag(v []byte) (weak []byte, strong, ok bool) {
	v = bytes.TrimSpace(v)
	switch {
	case bytes.HasPrefix(v, []byte("W/")):
		return v, false, true
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		return append([]byte("W/"), v...), true, true
	}
	return nil, false, false
}

// parseStatus parses a :status value; 0 if it is not a 3-digit number.
func parseStatus(v []byte) int {
	if len(v) != 3 {
		return 0
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0
	}
	return n
}
