package server

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// Settings are the serve command's knobs. Each has a flag and an
// environment variable; a flag given on the command line wins.
type Settings struct {
	ConfigPath    string        // -config, STREAMSUB_CONFIG
	Listen        string        // -listen, STREAMSUB_LISTEN: gRPC (ext_proc + health)
	Admin         string        // -admin, STREAMSUB_ADMIN: HTTP /metrics and /healthz; "" disables
	LogLevel      slog.Level    // -log-level, STREAMSUB_LOG_LEVEL
	LogFormat     string        // -log-format, STREAMSUB_LOG_FORMAT: json or text
	DrainTimeout  time.Duration // -drain-timeout, STREAMSUB_DRAIN_TIMEOUT: graceful stop deadline
	WatchInterval time.Duration // -watch-interval, STREAMSUB_WATCH_INTERVAL: config file poll; 0 disables
}

// DefaultSettings returns the settings used when neither a flag nor the
// environment says otherwise.
func DefaultSettings() Settings {
	return Settings{
		Listen:        "127.0.0.1:50051",
		Admin:         "127.0.0.1:9090",
		LogLevel:      slog.LevelInfo,
		LogFormat:     "json",
		DrainTimeout:  15 * time.Second,
		WatchInterval: 2 * time.Second,
	}
}

// envPrefix starts every environment variable name.
const envPrefix = "STREAMSUB_"

// FromEnv overrides s with the STREAMSUB_* variables that getenv returns
// non-empty. It names the variable in its error.
func (s *Settings) FromEnv(getenv func(string) string) error {
	fs := flag.NewFlagSet("env", flag.ContinueOnError)
	s.RegisterFlags(fs)
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v := getenv(name)
		if v == "" || err != nil {
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = fmt.Errorf("%s=%q: %w", name, v, e)
		}
	})
	return err
}

// RegisterFlags binds s's fields to flags of fs, with s's current values as
// defaults (call FromEnv first so the environment sets the defaults).
func (s *Settings) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.ConfigPath, "config", s.ConfigPath, "config file (YAML); required")
	fs.StringVar(&s.Listen, "listen", s.Listen, "gRPC listen address (ext_proc and health)")
	fs.StringVar(&s.Admin, "admin", s.Admin, "admin HTTP listen address for /metrics and /healthz (empty: off)")
	fs.TextVar(&s.LogLevel, "log-level", s.LogLevel, "log level: debug, info, warn, error")
	fs.Func("log-format", "log format: json or text (default "+s.LogFormat+")", func(v string) error {
		if v != "json" && v != "text" {
			return fmt.Errorf("want json or text")
		}
		s.LogFormat = v
		return nil
	})
	fs.DurationVar(&s.DrainTimeout, "drain-timeout", s.DrainTimeout, "on SIGTERM, how long in-flight streams may finish before a hard stop")
	fs.DurationVar(&s.WatchInterval, "watch-interval", s.WatchInterval, "how often to check the config file for changes (0: only SIGHUP reloads)")
}

// Logger returns the structured logger the settings ask for, writing to w.
func (s *Settings) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: s.LogLevel}
	if s.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
