package server

import (
	"errors"
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
	Pprof         bool          // -pprof, STREAMSUB_PPROF: /debug/pprof/ on the admin listener too
	LogLevel      slog.Level    // -log-level, STREAMSUB_LOG_LEVEL
	LogFormat     string        // -log-format, STREAMSUB_LOG_FORMAT: json or text
	DrainDelay    time.Duration // -drain-delay, STREAMSUB_DRAIN_DELAY: NOT_SERVING but still serving, before the graceful stop
	DrainTimeout  time.Duration // -drain-timeout, STREAMSUB_DRAIN_TIMEOUT: graceful stop deadline
	WatchInterval time.Duration // -watch-interval, STREAMSUB_WATCH_INTERVAL: config file poll; 0 disables

	// Stream limits (see limits.go).
	MaxStreams        int           // -max-streams, STREAMSUB_MAX_STREAMS: concurrent streams, all connections
	MaxConnStreams    int           // -max-conn-streams, STREAMSUB_MAX_CONN_STREAMS: concurrent streams per connection
	StreamIdleTimeout time.Duration // -stream-idle-timeout, STREAMSUB_STREAM_IDLE_TIMEOUT: 0 disables

	// TLS of the gRPC listener; all empty: plaintext.
	TLSCert     string // -tls-cert, STREAMSUB_TLS_CERT: PEM certificate chain
	TLSKey      string // -tls-key, STREAMSUB_TLS_KEY: PEM private key
	TLSClientCA string // -tls-client-ca, STREAMSUB_TLS_CLIENT_CA: PEM CAs; set: client certificates required
}

// DefaultSettings returns the settings used when neither a flag nor the
// environment says otherwise.
func DefaultSettings() Settings {
	return Settings{
		Listen:        "127.0.0.1:50051",
		Admin:         "127.0.0.1:9090",
		LogLevel:      slog.LevelInfo,
		LogFormat:     "json",
		DrainDelay:    5 * time.Second,
		DrainTimeout:  15 * time.Second,
		WatchInterval: 2 * time.Second,

		MaxStreams:        DefaultMaxStreams,
		MaxConnStreams:    DefaultMaxConnStreams,
		StreamIdleTimeout: 5 * time.Minute,
	}
}

// Check reports settings that cannot work together, naming the flags.
func (s *Settings) Check() error {
	var errs []error
	if s.MaxStreams < 1 {
		errs = append(errs, fmt.Errorf("-max-streams %d: want at least 1", s.MaxStreams))
	}
	if s.MaxConnStreams < 1 {
		errs = append(errs, fmt.Errorf("-max-conn-streams %d: want at least 1", s.MaxConnStreams))
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"-drain-delay", s.DrainDelay}, {"-drain-timeout", s.DrainTimeout}, {"-stream-idle-timeout", s.StreamIdleTimeout}, {"-watch-interval", s.WatchInterval}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s %v: negative", d.flag, d.v))
		}
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		errs = append(errs, errors.New("-tls-cert and -tls-key go together"))
	}
	if s.TLSClientCA != "" && s.TLSCert == "" {
		errs = append(errs, errors.New("-tls-client-ca needs -tls-cert and -tls-key (client certificates are checked over TLS)"))
	}
	return errors.Join(errs...)
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
	fs.BoolVar(&s.Pprof, "pprof", s.Pprof, "serve Go's profiles under /debug/pprof/ on the admin listener (CPU, heap, goroutines: for profiling under load; keep the admin address private)")
	fs.TextVar(&s.LogLevel, "log-level", s.LogLevel, "log level: debug, info, warn, error")
	fs.Func("log-format", "log format: json or text (default "+s.LogFormat+")", func(v string) error {
		if v != "json" && v != "text" {
			return fmt.Errorf("want json or text")
		}
		s.LogFormat = v
		return nil
	})
	fs.DurationVar(&s.DrainDelay, "drain-delay", s.DrainDelay, "on SIGTERM, how long to keep serving new streams with health NOT_SERVING, so load balancers move away first; at least Envoy's health-check interval × unhealthy_threshold")
	fs.DurationVar(&s.DrainTimeout, "drain-timeout", s.DrainTimeout, "after the drain delay, how long in-flight streams may finish before a hard stop")
	fs.DurationVar(&s.WatchInterval, "watch-interval", s.WatchInterval, "how often to check the config file for changes (0: only SIGHUP reloads)")
	fs.IntVar(&s.MaxStreams, "max-streams", s.MaxStreams, "concurrent gRPC streams over all connections; more are refused with RESOURCE_EXHAUSTED")
	fs.IntVar(&s.MaxConnStreams, "max-conn-streams", s.MaxConnStreams, "concurrent gRPC streams per connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS)")
	fs.DurationVar(&s.StreamIdleTimeout, "stream-idle-timeout", s.StreamIdleTimeout, "end a Process stream that receives no message for this long (0: never)")
	fs.StringVar(&s.TLSCert, "tls-cert", s.TLSCert, "PEM certificate (chain) of the gRPC listener; with -tls-key turns TLS on and plaintext off")
	fs.StringVar(&s.TLSKey, "tls-key", s.TLSKey, "PEM private key of -tls-cert")
	fs.StringVar(&s.TLSClientCA, "tls-client-ca", s.TLSClientCA, "PEM CA certificates; when set, clients must present a certificate they signed (mTLS)")
}

// Logger returns the structured logger the settings ask for, writing to w.
func (s *Settings) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: s.LogLevel}
	if s.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
