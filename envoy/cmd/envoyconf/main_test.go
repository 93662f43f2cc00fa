package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsub/streamsub/envoy"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name              string
		streamsub, origin string
		config            string
		noDecoder         bool
		want              []string // substrings of the configuration
		wantErr           string
	}{
		{"ports", "127.0.0.1:28102", "127.0.0.1:28080", "", false,
			[]string{"port_value: 28100", "port_value: 28101", "port_value: 28102", "port_value: 28080", "cluster: decoder,"}, ""},
		{"no decoder", "127.0.0.1:1", "127.0.0.1:2", "", true, []string{"route: {cluster: origin, timeout: 120s}"}, ""},
		{"header safety net", "127.0.0.1:1", "127.0.0.1:2", "../../../scripts/load.yaml", false, []string{"x-debug-token"}, ""},
		{"bad config", "127.0.0.1:1", "127.0.0.1:2", "no-such.yaml", false, nil, "no-such.yaml"},
		{"host name", "localhost:1", "127.0.0.1:2", "", false, nil, "want an IP address"},
		{"bad port", "127.0.0.1:0", "127.0.0.1:2", "", false, nil, "bad port"},
		{"no port", "127.0.0.1:1", "127.0.0.1", "", false, nil, "-origin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := envoy.Local()
			p.ListenPort, p.AdminPort, p.NoDecoder = 28100, 28101, tt.noDecoder
			out := filepath.Join(t.TempDir(), "envoy.yaml")
			err := run(&p, tt.streamsub, tt.origin, tt.config, out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("configuration lacks %q", w)
				}
			}
		})
	}
}
