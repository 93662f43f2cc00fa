// Package e2e tests streamsub through a real Envoy: the harness builds
// cmd/streamsub once into a temporary directory, starts the demo origin,
// `streamsub serve` and Envoy on free loopback ports and drives HTTP
// requests through them. The tests are behind the e2e build tag:
//
//	go test -tags e2e ./e2e/ -v
//
// Envoy is found via $ENVOY_BIN, `envoy` on PATH or .venv/bin/envoy (`make
// envoy`); without it the tests skip, except under CI=true where they fail.
package e2e
