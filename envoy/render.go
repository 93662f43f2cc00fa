// Package envoy owns streamsub's Envoy bootstrap configs: one template,
// rendered for docker-compose (envoy.yaml), for a local run on loopback
// (envoy-local.yaml, used by scripts/demo.sh) and, with free ports, by the
// e2e harness. The committed renderings are checked against the template by
// this package's tests.
package envoy

import (
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"text/template"
	"time"
)

//go:embed envoy.yaml.tmpl
var tmplText string

var tmpl = template.Must(template.New("envoy.yaml.tmpl").Option("missingkey=error").
	Funcs(template.FuncMap{"dur": duration}).Parse(tmplText))

// duration formats d as a protobuf JSON Duration ("2s", "0.25s").
func duration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// Params are the values the template needs.
type Params struct {
	// Name labels the rendering in its header comment.
	Name string
	// ListenAddress and ListenPort: the HTTP listener clients talk to.
	ListenAddress string
	ListenPort    int
	// AdminPort: Envoy's admin interface, always bound to 127.0.0.1.
	AdminPort int
	// Streamsub are the streamsub replicas' gRPC (ext_proc) listeners: the
	// hosts of one cluster (with STRICT_DNS, each name stands for all its
	// addresses).
	Streamsub []Endpoint
	// MaxConnStreams is Envoy's limit of streams per connection to
	// streamsub: at most streamsub's -max-conn-streams.
	MaxConnStreams int
	// HealthCheck is Envoy's gRPC health check of each streamsub host.
	HealthCheck HealthCheck
	// UpstreamTLS, when set, makes Envoy talk to streamsub over mTLS.
	UpstreamTLS *TLS
	// OriginAddress/Port: the upstream HTTP/1.1 origin.
	OriginAddress string
	OriginPort    int
	// ClusterType is STATIC for IP addresses, STRICT_DNS for host names.
	ClusterType string
	// DisallowIsError makes a header mutation Envoy refuses fail the
	// request instead of being ignored (loud in tests).
	DisallowIsError bool
	// Internal are the internal headers Envoy strips itself, beneath
	// streamsub's header_filter: the same lists (HeaderFilterOf), so none
	// crosses when streamsub is down or fails open. Empty: no safety net.
	Internal HeaderFilter
	// StreamIdleTimeout ends a stream that moves no bytes for that long
	// (a reset once the response has begun); 0 means
	// DefaultStreamIdleTimeout. It bounds a rewritten body that streamsub
	// stalls: full-duplex body messages have no message_timeout.
	StreamIdleTimeout time.Duration
	// NoDecoder routes straight to the origin, without the internal
	// "decoder" listener that decodes gzip and brotli bodies: what that
	// hop costs can then be measured (BENCHMARKS.md, "Through Envoy:
	// attempts"). Bodies an origin compresses anyway then reach streamsub
	// encoded and are not rewritten; no shipped rendering sets it.
	NoDecoder bool
}

// Upstream is the cluster the ingress routes go to.
func (p Params) Upstream() string {
	if p.NoDecoder {
		return "origin"
	}
	return "decoder"
}

// Endpoint is one host:port.
type Endpoint struct {
	Address string
	Port    int
}

// HealthCheck are the timings of Envoy's health check of streamsub. A host
// that starts failing is unhealthy after about Interval × UnhealthyThreshold
// (+ Timeout when it does not answer): streamsub's -drain-delay must be at
// least that long.
type HealthCheck struct {
	Interval, Timeout  time.Duration
	UnhealthyThreshold int
}

// DetectionTime is the longest a failing host stays healthy in Envoy's
// eyes: UnhealthyThreshold checks, Interval apart, the last one waiting
// Timeout.
func (h HealthCheck) DetectionTime() time.Duration {
	return time.Duration(h.UnhealthyThreshold)*h.Interval + h.Timeout
}

// DefaultHealthCheck is the shipped health check: a draining streamsub is
// out of rotation within 3 s, so the default -drain-delay (5 s) covers it.
var DefaultHealthCheck = HealthCheck{Interval: time.Second, Timeout: time.Second, UnhealthyThreshold: 2}

// TLS are the files and name of the mTLS connection to streamsub, as paths
// Envoy sees.
type TLS struct {
	CertFile, KeyFile string // Envoy's client certificate and key
	CAFile            string // the CA that signed streamsub's certificate
	SNI               string // server name sent and required in streamsub's certificate
}

// DefaultStreamIdleTimeout is the stream idle timeout of the shipped
// renderings (Envoy's own default is 5 minutes).
const DefaultStreamIdleTimeout = 60 * time.Second

// Local is the loopback rendering used by `make demo`.
func Local() Params {
	return Params{
		Name:           "local",
		ListenAddress:  "127.0.0.1",
		ListenPort:     10000,
		AdminPort:      9901,
		Streamsub:      []Endpoint{{"127.0.0.1", 50051}},
		MaxConnStreams: 1000,
		HealthCheck:    DefaultHealthCheck,
		OriginAddress:  "127.0.0.1",
		OriginPort:     8080,
		ClusterType:    "STATIC",
	}
}

// Compose is the docker-compose rendering: services are reached by name,
// and the listener must accept connections forwarded into the container.
func Compose() Params {
	return Params{
		Name:           "docker-compose",
		ListenAddress:  "0.0.0.0",
		ListenPort:     10000,
		AdminPort:      9901,
		Streamsub:      []Endpoint{{"streamsub", 50051}},
		MaxConnStreams: 1000,
		HealthCheck:    DefaultHealthCheck,
		OriginAddress:  "origin",
		OriginPort:     8080,
		ClusterType:    "STRICT_DNS",
	}
}

// Render returns the bootstrap YAML for p.
func Render(p Params) ([]byte, error) {
	if p.ClusterType != "STATIC" && p.ClusterType != "STRICT_DNS" {
		return nil, fmt.Errorf("envoy: cluster type %q: want STATIC or STRICT_DNS", p.ClusterType)
	}
	if len(p.Streamsub) == 0 {
		return nil, fmt.Errorf("envoy: %s: no streamsub endpoint", p.Name)
	}
	if h := p.HealthCheck; h.Interval <= 0 || h.Timeout <= 0 || h.UnhealthyThreshold < 1 {
		return nil, fmt.Errorf("envoy: %s: health check %+v: interval, timeout and unhealthy threshold must be positive", p.Name, h)
	}
	if p.MaxConnStreams < 1 {
		return nil, fmt.Errorf("envoy: %s: max concurrent streams %d: want at least 1", p.Name, p.MaxConnStreams)
	}
	switch {
	case p.StreamIdleTimeout == 0:
		p.StreamIdleTimeout = DefaultStreamIdleTimeout
	case p.StreamIdleTimeout < time.Millisecond:
		return nil, fmt.Errorf("envoy: %s: stream idle timeout %v: want 0 (default) or at least 1ms", p.Name, p.StreamIdleTimeout)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("envoy: render %s: %w", p.Name, err)
	}
	return b.Bytes(), nil
}

// Renderings maps each committed file in envoy/ to its parameters.
var Renderings = map[string]Params{
	"envoy.yaml":       Compose(),
	"envoy-local.yaml": Local(),
}
