// Package matcher owns streamsub's byte-level matching: compiled rule sets
// and the streaming rewriter that applies them to a body in one pass (or to
// a short value, such as a header's, as a body of its own: RewriteValue),
// and the header set that recognises internal header names.
//
// The rewrite contract is docs/semantics.md (leftmost-first across
// rules in declaration order, once-rules that keep shadowing, Perl
// empty-match handling that steps over whole UTF-8 units, $-templates,
// chunking-independent output). The package knows nothing of gRPC, Envoy
// or HTTP.
//
// Concurrency: a RuleSet and a HeaderSet are immutable after construction
// and safe for concurrent use; a Stream belongs to one goroutine.
package matcher
