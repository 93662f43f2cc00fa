// Package config holds streamsub's runtime configuration: the compiled
// rule sets, the host map that picks one per request, the content types each
// rewrites, the internal headers to strip, and each rule set's header
// rewriters (headerrewrite). The processor reads it on every stream; nothing
// here parses a file.
//
// A Config comes from New, which checks it, compiles every rule set once
// and builds the host lookup; after that it is immutable and safe for
// concurrent use. Reading a configuration file (YAML or JSON, validated
// with file:line errors) is package config/load's job, which ends in New.
package config
