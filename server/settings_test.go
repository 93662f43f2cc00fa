package server

import (
	"flag"
	"log/slog"
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
		}, nil, func(s Settings) bool {
			return s.ConfigPath == "/etc/s.yaml" && s.Listen == "127.0.0.1:1" && s.Admin == "127.0.0.1:9090" &&
				s.LogLevel == slog.LevelDebug && s.DrainTimeout == 3*time.Second && s.WatchInterval == 0
		}, false},
		{"flag wins over env", map[string]string{"STREAMSUB_LISTEN": "127.0.0.1:1"},
			[]string{"-listen", "127.0.0.1:2", "-log-format", "text"}, func(s Settings) bool {
				return s.Listen == "127.0.0.1:2" && s.LogFormat == "text"
			}, false},
		{"bad env duration", map[string]string{"STREAMSUB_DRAIN_TIMEOUT": "soon"}, nil, nil, true},
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
