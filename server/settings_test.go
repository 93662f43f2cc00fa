package server

import (
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestSettingsEnvAndFlags(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    func(Settings) bool
		wantErr bool
	}{
		{"defaults", nil, nil, func(s Settings) bool {
			return s == DefaultSettings()
		}, false},
		{"env", map[string]string{
			"STREAMSUB_CONFIG": "/etc/s.yaml", "STREAMSUB_LISTEN": "127.0.0.1:1", "STREAMSUB_ADMIN": "",
			"STREAMSUB_LOG_LEVEL": "debug", "STREAMSUB_DRAIN_TIMEOUT": "3s", "STREAMSUB_WATCH_INTERVAL": "0s",
			"STREAMSUB_PPROF": "true",
		}, nil, func(s Settings) bool {
			return s.ConfigPath == "/etc/s.yaml" && s.Listen == "127.0.0.1:1" && s.Admin == "127.0.0.1:9090" && s.Pprof &&
				s.LogLevel == slog.LevelDebug && s.DrainTimeout == 3*time.Second && s.WatchInterval == 0
		}, false},
		{"flag wins over env", map[string]string{"STREAMSUB_LISTEN": "127.0.0.1:1"},
			[]string{"-listen", "127.0.0.1:2", "-log-format", "text"}, func(s Settings) bool {
				return s.Listen == "127.0.0.1:2" && s.LogFormat == "text"
			}, false},
		{"limits, drain delay and TLS from env", map[string]string{
			"STREAMSUB_MAX_STREAMS": "50", "STREAMSUB_MAX_CONN_STREAMS": "7", "STREAMSUB_STREAM_IDLE_TIMEOUT": "0",
			"STREAMSUB_DRAIN_DELAY": "9s", "STREAMSUB_TLS_CERT": "c.pem", "STREAMSUB_TLS_KEY": "k.pem", "STREAMSUB_TLS_CLIENT_CA": "ca.pem",
		}, []string{"-max-conn-streams", "8"}, func(s Settings) bool {
			return s.MaxStreams == 50 && s.MaxConnStreams == 8 && s.StreamIdleTimeout == 0 && s.DrainDelay == 9*time.Second &&
				s.TLSCert == "c.pem" && s.TLSKey == "k.pem" && s.TLSClientCA == "ca.pem"
		}, false},
		{"bad env duration", map[string]string{"STREAMSUB_DRAIN_TIMEOUT": "soon"}, nil, nil, true},
		{"bad env int", map[string]string{"STREAMSUB_MAX_STREAMS": "many"}, nil, nil, true},
		{"bad env level", map[string]string{"STREAMSUB_LOG_LEVEL": "loud"}, nil, nil, true},
		{"bad log format", map[string]string{"STREAMSUB_LOG_FORMAT": "xml"}, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSettings()
			err := s.FromEnv(func(k string) string { return tt.env[k] })
			if err == nil {
				fs := flag.NewFlagSet("serve", flag.ContinueOnError)
				s.RegisterFlags(fs)
				err = fs.Parse(tt.args)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && !tt.want(s) {
				t.Errorf("settings %+v", s)
			}
		})
	}
}

func TestSettingsCheck(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Settings)
		wantErr string // "": valid
	}{
		{"defaults", func(*Settings) {}, ""},
		{"TLS with client CA", func(s *Settings) { s.TLSCert, s.TLSKey, s.TLSClientCA = "c", "k", "ca" }, ""},
		{"no stream allowed", func(s *Settings) { s.MaxStreams = 0 }, "-max-streams 0: want at least 1"},
		{"no stream per connection", func(s *Settings) { s.MaxConnStreams = -1 }, "-max-conn-streams -1: want at least 1"},
		{"negative drain delay", func(s *Settings) { s.DrainDelay = -time.Second }, "-drain-delay -1s: negative"},
		{"key without cert", func(s *Settings) { s.TLSKey = "k" }, "-tls-cert and -tls-key go together"},
		{"client CA without cert", func(s *Settings) { s.TLSClientCA = "ca" }, "-tls-client-ca needs -tls-cert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSettings()
			tt.mutate(&s)
			err := s.Check()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
