// Package config owns streamsub's configuration file: it reads YAML (or
// JSON) in the schema of proto/streamsub/config/v1, checks every key and
// value against that schema, validates the whole file, flattens `extends`
// and compiles each rule set once with matcher.Compile.
//
// Load and Parse either return a Config that is fully usable or errors that
// name the file and the culprit (field path, rule set, rule index and name);
// nothing is half-applied. A Config is immutable after Parse and safe for
// concurrent use. Reloading and serving are the server's business; this
// package knows nothing of gRPC or Envoy.
package config
