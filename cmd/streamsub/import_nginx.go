package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/streamsub/streamsub/config/load"
	"github.com/streamsub/streamsub/nginximport"
	"github.com/streamsub/streamsub/nginxparse"
)

func init() {
	register("import-nginx", "convert nginx replace_filter/subs_filter/sub_filter rules: import-nginx [-o FILE] [-lenient] NGINX.conf", runImportNginx)
}

func runImportNginx(args []string) int {
	return importNginx(args, os.Stdout, os.Stderr)
}

// importNginx translates an nginx configuration into a streamsub one.
// Warnings go to stderr and the import succeeds; a rule that cannot be
// translated fails it (exit 2) unless -lenient, which writes it as a
// comment. Exit 1 when a file cannot be read or written.
func importNginx(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import-nginx", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: streamsub import-nginx [-o FILE] [-lenient] NGINX.conf")
		fmt.Fprintln(stderr, "Writes a streamsub configuration (standard output by default) from the replace_filter,")
		fmt.Fprintln(stderr, "subs_filter and sub_filter rules of an nginx configuration and the files it includes.")
		fs.PrintDefaults()
	}
	outPath := fs.String("o", "", "write the configuration to this `file`")
	lenient := fs.Bool("lenient", false, "write rules that cannot be translated as comments instead of failing")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitRejected
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "streamsub import-nginx: want exactly one nginx configuration file")
		return exitRejected
	}
	src := fs.Arg(0)
	res, err := nginximport.Import(nginxparse.OS, src)
	if err != nil {
		fmt.Fprintln(stderr, err)
		if errors.As(err, new(*os.PathError)) {
			return exitIO
		}
		fmt.Fprintf(stderr, "streamsub import-nginx: %s: not imported\n", src)
		return exitRejected
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "%s: warning: %s\n", w.Pos, w.Msg)
	}
	for _, p := range res.Problems {
		if *lenient {
			fmt.Fprintf(stderr, "%s: not translated (written as a comment): %s\n", p.Pos, p.Msg)
		} else {
			fmt.Fprintf(stderr, "%s: cannot be translated: %s\n", p.Pos, p.Msg)
		}
	}
	if len(res.Problems) > 0 && !*lenient {
		fmt.Fprintf(stderr, "streamsub import-nginx: %d directive(s) cannot be translated; nothing written (-lenient writes them as comments)\n", len(res.Problems))
		return exitRejected
	}
	if code := writeChecked(res.YAML, *outPath, stdout, stderr); code != exitOK {
		return code
	}
	fmt.Fprintf(stderr, "streamsub import-nginx: %s: %d rule(s) in %d rule set(s), %d warning(s), %d untranslated\n",
		src, res.Rules, res.RuleSets, len(res.Warnings), len(res.Problems))
	return exitOK
}

// writeChecked loads a generated configuration with the loader of
// `streamsub check` (from a temporary file) and, if it is accepted, writes
// it to outPath, or to stdout when outPath is "". A rejection is a bug of
// the import.
func writeChecked(data []byte, outPath string, stdout, stderr io.Writer) int {
	tmp, err := os.CreateTemp("", "streamsub-import-*.yaml")
	if err == nil {
		defer os.Remove(tmp.Name())
		_, err = tmp.Write(data)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamsub import-nginx: checking the output: %v\n", err)
		return exitIO
	}
	if _, err := load.File(tmp.Name()); err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintln(stderr, "streamsub import-nginx: the configuration loader rejects the generated file (a bug in import-nginx); nothing written")
		return exitRejected
	}
	if outPath != "" {
		err = os.WriteFile(outPath, data, 0o666)
	} else {
		_, err = stdout.Write(data)
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamsub import-nginx: %v\n", err)
		return exitIO
	}
	return exitOK
}
