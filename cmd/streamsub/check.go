package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/streamsub/streamsub/config"
)

func init() {
	register("check", "validate a configuration file offline: check -config FILE", runCheck)
}

func runCheck(args []string) int {
	return check(args, os.Stdout, os.Stderr)
}

// check loads a configuration with the server's own loader and prints a
// short summary. Exit 0 when it is valid, 2 when it is rejected (or the
// flags are bad), 1 when the file cannot be read.
func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: streamsub check -config FILE")
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "", "configuration `file` (required)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitRejected
	}
	if *configPath == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "streamsub check: want exactly -config FILE")
		return exitRejected
	}
	cfg, code := loadConfig(*configPath, "check", stderr)
	if cfg == nil {
		return code
	}
	writeSummary(stdout, cfg)
	writeCost(stdout, cfg)
	return exitOK
}

// writeSummary prints what a valid configuration holds, one rule set a line.
func writeSummary(w io.Writer, cfg *config.Config) {
	rules := 0
	width := 0
	for _, rs := range cfg.RuleSets {
		rules += len(rs.Rules)
		width = max(width, len(rs.Name))
	}
	fmt.Fprintf(w, "%s: ok: %d rule set(s), %d rule(s) after extends, max_buffered_bytes %d\n",
		cfg.Source, len(cfg.RuleSets), rules, cfg.MaxBufferedBytes)
	for _, rs := range cfg.RuleSets {
		fmt.Fprintf(w, "  %-*s  %3d rule(s)", width, rs.Name, len(rs.Rules))
		if len(rs.Extends) > 0 {
			fmt.Fprintf(w, "  extends %s", strings.Join(rs.Extends, ", "))
		}
		fmt.Fprintf(w, "  content types %s", strings.Join(rs.ContentTypes, ", "))
		if rs.KeepLastModified {
			fmt.Fprint(w, "  keeps last-modified")
		}
		switch rw := rs.ResponseRewriter; {
		case rw == nil:
			fmt.Fprint(w, "  response headers none")
		case len(rs.HeaderRules) > 0:
			fmt.Fprintf(w, "  response headers %d (%d header rule(s))", len(rw.Names()), len(rs.HeaderRules))
		default:
			fmt.Fprintf(w, "  response headers %d (body rules)", len(rw.Names()))
		}
		if rs.RequestRewriter != nil {
			fmt.Fprintf(w, "  request headers %s (%d rule(s))", strings.Join(rs.RequestHeaders, ", "), len(rs.RequestHeaderRules))
		}
		if rs.Tests > 0 {
			fmt.Fprintf(w, "  %d test(s) passed", rs.Tests)
		}
		fmt.Fprintln(w)
	}
	if len(cfg.Hosts) == 0 {
		fmt.Fprintf(w, "  hosts: none (every host gets %q)\n", cfg.RuleSets[0].Name)
	} else {
		fmt.Fprintf(w, "  hosts: %s\n", arrows(cfg.Hosts))
	}
	if len(cfg.Shadows) > 0 {
		fmt.Fprintf(w, "  shadows: %s (sample %v)\n", arrows(cfg.Shadows), cfg.ShadowSample)
	}
	fmt.Fprintf(w, "  header filter: request %s; response %s\n",
		presence(cfg.RequestHeaders != nil), presence(cfg.ResponseHeaders != nil))
	switch r := cfg.Remember; {
	case r.Entries == 0:
		fmt.Fprintln(w, "  remember: off")
	case r.VerifyOneIn == 0:
		fmt.Fprintf(w, "  remember: %d entries for %v, never verified\n", r.Entries, r.TTL)
	default:
		fmt.Fprintf(w, "  remember: %d entries for %v, verify 1 in %d\n", r.Entries, r.TTL, r.VerifyOneIn)
	}
}

// arrows lists a map's entries in key order, "key → value", separated by
// commas.
func arrows(m map[string]string) string {
	entries := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		entries = append(entries, k+" → "+m[k])
	}
	return strings.Join(entries, ", ")
}

func presence(set bool) string {
	if set {
		return "yes"
	}
	return "none"
}
