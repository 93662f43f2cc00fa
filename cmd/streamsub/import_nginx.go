package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/config/load"
	"github.com/streamsub/streamsub/config/ruletest"
	"github.com/streamsub/streamsub/nginximport"
	"github.com/streamsub/streamsub/nginxparse"
)

const importNginxUsage = "import-nginx [-o FILE] [-lenient] [-examples DIR [-examples-rule-set NAME]] NGINX.conf"

func init() {
	register("import-nginx", "convert nginx replace_filter/subs_filter/sub_filter rules: "+importNginxUsage, runImportNginx)
}

func runImportNginx(args []string) int {
	return importNginx(args, os.Stdout, os.Stderr)
}

// importNginx translates an nginx configuration into a streamsub one.
// Warnings go to stderr and the import succeeds; a rule that cannot be
// translated fails it (exit 2) unless -lenient, which writes it as a
// comment. With -examples, the example pages of a directory become tests
// of a rule set; one whose expected body streamsub does not produce fails
// the import (exit 2, with where the outputs differ) unless -lenient,
// which leaves it out. Exit 1 when a file cannot be read or written.
func importNginx(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import-nginx", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: streamsub "+importNginxUsage)
		fmt.Fprintln(stderr, "Writes a streamsub configuration (standard output by default) from the replace_filter,")
		fmt.Fprintln(stderr, "subs_filter and sub_filter rules of an nginx configuration and the files it includes.")
		fmt.Fprintln(stderr, "-examples DIR: pairs NAME.input.EXT (a body from the origin) and NAME.expected.EXT (the")
		fmt.Fprintln(stderr, "body nginx serves for it) become tests of a rule set; EXT is html, css, js, json, xml, txt or svg.")
		fs.PrintDefaults()
	}
	outPath := fs.String("o", "", "write the configuration to this `file`")
	lenient := fs.Bool("lenient", false, "write rules that cannot be translated as comments, and leave out examples streamsub does not reproduce, instead of failing")
	examples := fs.String("examples", "", "add the examples of this `directory` as tests")
	examplesSet := fs.String("examples-rule-set", "", "add the examples to this rule set (`name`; default: the first, which hosts without an entry get)")
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
	if *examplesSet != "" && *examples == "" {
		fmt.Fprintln(stderr, "streamsub import-nginx: -examples-rule-set needs -examples")
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
	tests := ""
	if *examples != "" {
		n, code := addExamples(res, *examples, *examplesSet, *lenient, stderr)
		if code != exitOK {
			return code
		}
		tests = fmt.Sprintf(", %d example test(s)", n)
	}
	if _, code := loadGenerated(res.YAML, stderr); code != exitOK {
		return code
	}
	if code := write(res.YAML, *outPath, stdout, stderr); code != exitOK {
		return code
	}
	fmt.Fprintf(stderr, "streamsub import-nginx: %s: %d rule(s) in %d rule set(s), %d warning(s), %d untranslated%s\n",
		src, res.Rules, res.RuleSets, len(res.Warnings), len(res.Problems), tests)
	return exitOK
}

// addExamples turns the examples of dir into tests of rule set name ("":
// the first) of res. It runs each as `streamsub check` will, and reports
// those whose expected body streamsub does not produce, with where the
// outputs differ and the import's warnings about the rule set. Those fail
// the import (exit 2) unless lenient, which leaves them out, with a
// comment. It returns the number of tests added.
func addExamples(res *nginximport.Result, dir, name string, lenient bool, stderr io.Writer) (int, int) {
	examples, err := nginximport.ReadExamples(os.DirFS(dir), dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		if errors.As(err, new(*fs.PathError)) {
			return 0, exitIO
		}
		fmt.Fprintf(stderr, "streamsub import-nginx: %s: examples not read; nothing written\n", dir)
		return 0, exitRejected
	}
	cfg, code := loadGenerated(res.YAML, stderr)
	if code != exitOK {
		return 0, code
	}
	if name == "" {
		name = cfg.RuleSets[0].Name
	}
	rs := cfg.RuleSet(name)
	if rs == nil {
		fmt.Fprintf(stderr, "streamsub import-nginx: -examples-rule-set %q: no such rule set in the import (it has %s)\n", name, ruleSetNames(cfg))
		return 0, exitRejected
	}
	var tests []nginximport.Test
	var notes []string
	for _, ex := range examples {
		c := ruletest.Case{Name: ex.Name, Input: ex.Input, Want: ex.Expected, ContentType: ex.ContentType,
			Rewrite: ex.ContentType == "" || rs.AcceptsContentType(ex.ContentType)}
		if f := ruletest.Run(rs.Compiled, c); f != nil {
			fmt.Fprintf(stderr, "%s: rule set %q: %v\n", ex.ExpectedFile, name, f)
			notes = append(notes, fmt.Sprintf("NOT A TEST: example %s: streamsub's output differs from %s at offset %d", ex.InputFile, ex.ExpectedFile, f.Diff.Offset))
			continue
		}
		tests = append(tests, ex.Test())
	}
	if failed := len(notes); failed > 0 {
		var at []string
		for _, w := range res.Warnings {
			if slices.Contains(w.Affects, name) {
				at = append(at, w.Pos.String())
			}
		}
		if len(at) > 0 {
			fmt.Fprintf(stderr, "streamsub import-nginx: the import warned that rule set %q may rewrite bodies differently from nginx: see the warning(s) at %s\n", name, strings.Join(at, ", "))
		}
		if !lenient {
			fmt.Fprintf(stderr, "streamsub import-nginx: %d of %d example(s) give other output in streamsub; nothing written (-lenient leaves them out)\n", failed, len(examples))
			return 0, exitRejected
		}
		fmt.Fprintf(stderr, "streamsub import-nginx: %d of %d example(s) give other output in streamsub; left out (noted in a comment)\n", failed, len(examples))
	}
	if err := res.AddTests(name, tests, notes); err != nil {
		fmt.Fprintf(stderr, "streamsub import-nginx: %v\n", err)
		return 0, exitRejected
	}
	return len(tests), exitOK
}

// loadGenerated loads a generated configuration with the loader of
// `streamsub check` (from a temporary file): the rule sets' tests run. A
// rejection is a bug of the import.
func loadGenerated(data []byte, stderr io.Writer) (*config.Config, int) {
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
		return nil, exitIO
	}
	cfg, err := load.File(tmp.Name())
	if err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintln(stderr, "streamsub import-nginx: the configuration loader rejects the generated file (a bug in import-nginx); nothing written")
		return nil, exitRejected
	}
	return cfg, exitOK
}

// write writes the configuration to outPath, or to stdout when outPath is
// "".
func write(data []byte, outPath string, stdout, stderr io.Writer) int {
	var err error
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
