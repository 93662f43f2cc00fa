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
	"text/template"
)

//go:embed envoy.yaml.tmpl
var tmplText string

var tmpl = template.Must(template.New("envoy.yaml.tmpl").Option("missingkey=error").Parse(tmplText))

// Params are the values the template needs.
type Params struct {
	// Name labels the rendering in its header comment.
	Name string
	// ListenAddress and ListenPort: the HTTP listener clients talk to.
	ListenAddress string
	ListenPort    int
	// AdminPort: Envoy's admin interface, always bound to 127.0.0.1.
	AdminPort int
	// StreamsubAddress/Port: streamsub's gRPC (ext_proc) listener.
	StreamsubAddress string
	StreamsubPort    int
	// OriginAddress/Port: the upstream HTTP/1.1 origin.
	OriginAddress string
	OriginPort    int
	// ClusterType is STATIC for IP addresses, STRICT_DNS for host names.
	ClusterType string
	// DisallowIsError makes a header mutation Envoy refuses fail the
	// request instead of being ignored (loud in tests).
	DisallowIsError bool
}

// Local is the loopback rendering used by `make demo`.
func Local() Params {
	return Params{
		Name:             "local",
		ListenAddress:    "127.0.0.1",
		ListenPort:       10000,
		AdminPort:        9901,
		StreamsubAddress: "127.0.0.1",
		StreamsubPort:    50051,
		OriginAddress:    "127.0.0.1",
		OriginPort:       8080,
		ClusterType:      "STATIC",
	}
}

// Compose is the docker-compose rendering: services are reached by name,
// and the listener must accept connections forwarded into the container.
func Compose() Params {
	return Params{
		Name:             "docker-compose",
		ListenAddress:    "0.0.0.0",
		ListenPort:       10000,
		AdminPort:        9901,
		StreamsubAddress: "streamsub",
		StreamsubPort:    50051,
		OriginAddress:    "origin",
		OriginPort:       8080,
		ClusterType:      "STRICT_DNS",
	}
}

// Render returns the bootstrap YAML for p.
func Render(p Params) ([]byte, error) {
	if p.ClusterType != "STATIC" && p.ClusterType != "STRICT_DNS" {
		return nil, fmt.Errorf("envoy: cluster type %q: want STATIC or STRICT_DNS", p.ClusterType)
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
