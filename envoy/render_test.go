package envoy

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsub/streamsub/internal/testpki"
)

var update = flag.Bool("update", false, "rewrite the committed renderings from the template")

// TestRenderingsInSync fails when a committed rendering differs from what the
// template produces, so the template stays the single source.
func TestRenderingsInSync(t *testing.T) {
	for file, p := range shipped(t) {
		t.Run(file, func(t *testing.T) {
			got, err := Render(p)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./envoy/ -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run go test ./envoy/ -update", file)
			}
		})
	}
}

func TestRenderRejectsBadParams(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Params)
		wantErr string
	}{
		{"cluster type", func(p *Params) { p.ClusterType = "LOGICAL" }, `cluster type "LOGICAL"`},
		{"no streamsub", func(p *Params) { p.Streamsub = nil }, "no streamsub endpoint"},
		{"no health-check interval", func(p *Params) { p.HealthCheck.Interval = 0 }, "health check"},
		{"no unhealthy threshold", func(p *Params) { p.HealthCheck.UnhealthyThreshold = 0 }, "health check"},
		{"no stream per connection", func(p *Params) { p.MaxConnStreams = 0 }, "max concurrent streams 0"},
		{"stream idle timeout under 1ms", func(p *Params) { p.StreamIdleTimeout = time.Microsecond }, "stream idle timeout 1µs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Local()
			tt.mutate(&p)
			if _, err := Render(p); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Render: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestNoDecoder: without the decoder hop, every route goes to the origin and
// nothing of the internal listener is left; the shipped renderings keep it.
func TestNoDecoder(t *testing.T) {
	for _, no := range []bool{false, true} {
		p := Local()
		p.NoDecoder = no
		b, err := Render(p)
		if err != nil {
			t.Fatal(err)
		}
		y := string(b)
		// The ingress routes (4) go to the decoder hop, whose own route
		// goes to the origin; or, without it, straight to the origin.
		toDecoder := strings.Count(y, "route: {cluster: decoder,")
		toOrigin := strings.Count(y, "route: {cluster: origin,")
		switch {
		case no && (toDecoder != 0 || toOrigin != 4 || strings.Contains(y, "internal_listener") || strings.Contains(y, "name: decoder")):
			t.Errorf("NoDecoder: %d routes to the decoder, %d to the origin, or the internal listener is left", toDecoder, toOrigin)
		case !no && (toDecoder != 4 || toOrigin != 1 || !strings.Contains(y, "internal_listener")):
			t.Errorf("with the decoder: %d routes to it, %d to the origin", toDecoder, toOrigin)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second: "1s", 250 * time.Millisecond: "0.25s", 90 * time.Second: "90s", time.Millisecond: "0.001s",
	} {
		if got := duration(d); got != want {
			t.Errorf("duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// shipped returns the shipped renderings' parameters (Shipped).
func shipped(t *testing.T) map[string]Params {
	t.Helper()
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Shipped(root)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestValidate runs `envoy --mode validate` on every shipped config and on a
// test-style rendering (disallow_is_error on, free ports).
func TestValidate(t *testing.T) {
	bin := BinaryOrSkip(t)
	files := map[string]string{}
	for file := range shipped(t) {
		files[file] = file
	}
	p := Local()
	p.Name, p.DisallowIsError, p.ListenPort, p.AdminPort = "e2e", true, 20000, 20001
	b, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "e2e.yaml")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	files["e2e rendering"] = tmp

	// Three replicas over mTLS, with certificates made for the test.
	dir := t.TempDir()
	pki, err := testpki.Write(dir, "envoy")
	if err != nil {
		t.Fatal(err)
	}
	p.Name = "e2e-tls"
	p.Streamsub = []Endpoint{{"127.0.0.1", 20002}, {"127.0.0.1", 20003}, {"127.0.0.1", 20004}}
	p.UpstreamTLS = &TLS{CertFile: pki.ClientCert, KeyFile: pki.ClientKey, CAFile: pki.CA, SNI: testpki.ServerName}
	if b, err = Render(p); err != nil {
		t.Fatal(err)
	}
	tmp = filepath.Join(dir, "e2e-tls.yaml")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	files["e2e TLS rendering"] = tmp

	// Without the decoder hop (for measuring it).
	p = Local()
	p.NoDecoder = true
	if b, err = Render(p); err != nil {
		t.Fatal(err)
	}
	tmp = filepath.Join(dir, "no-decoder.yaml")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	files["rendering without the decoder hop"] = tmp
	for name, path := range files {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(bin, "--mode", "validate", "--disable-hot-restart", "-c", path).CombinedOutput()
			if err != nil {
				t.Fatalf("envoy --mode validate -c %s: %v\n%s", path, err, out)
			}
		})
	}
}

// TestStreamIdleTimeout: 0 renders the default; a set value is rendered as
// a protobuf duration.
func TestStreamIdleTimeout(t *testing.T) {
	for in, want := range map[time.Duration]string{
		0:                       "stream_idle_timeout: 60s\n",
		3 * time.Second:         "stream_idle_timeout: 3s\n",
		1500 * time.Millisecond: "stream_idle_timeout: 1.5s\n",
	} {
		p := Local()
		p.StreamIdleTimeout = in
		b, err := Render(p)
		if err != nil || !bytes.Contains(b, []byte(want)) {
			t.Errorf("Render(%v): %v; want it to contain %q", in, err, want)
		}
	}
}
