// Package server owns the streamsub process around the ext_proc service:
// the gRPC server (keepalive relaxed for Envoy's pings, gRPC health), the
// admin HTTP listener (/metrics, /healthz), the current configuration and
// its hot reload (SIGHUP via Reload, file polling), and graceful shutdown.
//
// It knows nothing of the ext_proc protocol (package processor) or of
// matching (package matcher) beyond wiring them; loading and validating a
// file is package config/load's job.
package server
