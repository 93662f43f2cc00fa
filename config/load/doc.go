// Package load reads streamsub's configuration file: YAML (or JSON) in the
// schema of proto/streamsub/config/v1. It checks every key and value against
// that schema, validates the whole file, flattens `extends`, and hands the
// result to config.New, which compiles each rule set once.
//
// File either returns a *config.Config that is fully usable or errors that
// name the file and the culprit (position, field path, rule set, rule index
// and name); nothing is half-applied. Reloading and serving are the server's
// business; this package knows nothing of gRPC or Envoy.
package load
