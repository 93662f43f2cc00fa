// Command nginxconf writes the nginx configuration of the through-proxy
// benchmark (package nginxconf) for the rule set that a streamsub
// configuration applies to a host, and prints that rule set's name.
//
//	nginxconf -config examples/streamsub.yaml -host 127.0.0.1:10000 \
//	    -sub-listen 127.0.0.1:18081 -subs-listen 127.0.0.1:18082 \
//	    -dir /tmp/ngx -module /usr/lib/nginx/modules/ngx_http_subs_filter_module.so \
//	    -o /tmp/ngx/nginx.conf
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/streamsub/streamsub/config/load"
	"github.com/streamsub/streamsub/internal/nginxconf"
)

func main() {
	var p nginxconf.Params
	configPath := flag.String("config", "", "streamsub configuration `file` (required)")
	host := flag.String("host", "127.0.0.1", "take the rule set streamsub picks for this `authority`")
	ruleSet := flag.String("ruleset", "", "take this rule set `name` instead of -host's")
	out := flag.String("o", "", "write the configuration to this `file` (required)")
	flag.StringVar(&p.Origin, "origin", "127.0.0.1:8080", "upstream `host:port`")
	flag.StringVar(&p.SubListen, "sub-listen", "", "sub_filter server `address` (required)")
	flag.StringVar(&p.SubsListen, "subs-listen", "", "subs_filter server `address` (required)")
	flag.StringVar(&p.Dir, "dir", "", "`directory` for the pid file, logs and temp files (required)")
	flag.StringVar(&p.SubsModule, "module", "/usr/lib/nginx/modules/ngx_http_subs_filter_module.so", "subs_filter module `file`")
	flag.IntVar(&p.Workers, "workers", 2, "nginx worker processes")
	flag.Parse()
	if *configPath == "" || *out == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(&p, *configPath, *host, *ruleSet, *out); err != nil {
		fmt.Fprintln(os.Stderr, "nginxconf:", err)
		os.Exit(1)
	}
	fmt.Println(p.RuleSet)
}

func run(p *nginxconf.Params, configPath, host, name, out string) error {
	cfg, err := load.File(configPath)
	if err != nil {
		return err
	}
	rs := cfg.RuleSetForHost(host)
	if name != "" {
		rs = cfg.RuleSet(name)
	}
	if rs == nil {
		return fmt.Errorf("%s: no rule set for host %q / name %q", configPath, host, name)
	}
	p.Source, p.RuleSet, p.Rules, p.ContentTypes = configPath, rs.Name, rs.Rules, rs.ContentTypes
	var b bytes.Buffer
	if err := nginxconf.Write(&b, *p); err != nil {
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}
