// Package server owns the streamsub process around the ext_proc service:
// the gRPC server (optional TLS and client-certificate checks, keepalive
// that tolerates Envoy's pings, stream limits per connection and in total,
// an idle-stream timeout, gRPC health), the admin HTTP listener (/metrics,
// /healthz), the current configuration and its hot reload (SIGHUP via
// Reload, file polling), and shutdown: NOT_SERVING for the drain delay,
// then a graceful stop bounded by the drain timeout.
//
// It knows nothing of the ext_proc protocol (package processor) or of
// matching (package matcher) beyond wiring them; loading and validating a
// file is package config/load's job.
package server
