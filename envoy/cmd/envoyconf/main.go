// Command envoyconf writes the loopback Envoy bootstrap (envoy.Local) with
// other ports, or without the decoder hop, and with the header safety net
// of a streamsub configuration (as the shipped renderings have that of
// examples/streamsub.yaml): the configurations that scripts/ab.sh runs
// side by side.
//
//	envoyconf -listen-port 28100 -admin-port 28101 -streamsub 127.0.0.1:28102 \
//	    -origin 127.0.0.1:28080 -config scripts/load.yaml [-no-decoder] -o /tmp/envoy.yaml
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/streamsub/streamsub/config/load"
	"github.com/streamsub/streamsub/envoy"
)

func main() {
	p := envoy.Local()
	p.Name = "envoyconf"
	flag.IntVar(&p.ListenPort, "listen-port", p.ListenPort, "HTTP listener `port` on 127.0.0.1")
	flag.IntVar(&p.AdminPort, "admin-port", p.AdminPort, "admin `port` on 127.0.0.1")
	streamsub := flag.String("streamsub", "127.0.0.1:50051", "streamsub's gRPC `host:port`")
	origin := flag.String("origin", "127.0.0.1:8080", "the origin's `host:port`")
	flag.BoolVar(&p.NoDecoder, "no-decoder", false, "route straight to the origin, without the decoder hop")
	config := flag.String("config", "", "streamsub configuration `file` whose header_filter Envoy applies too (default: none)")
	out := flag.String("o", "", "write the configuration to this `file` (required)")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(&p, *streamsub, *origin, *config, *out); err != nil {
		fmt.Fprintln(os.Stderr, "envoyconf:", err)
		os.Exit(1)
	}
}

func run(p *envoy.Params, streamsub, origin, config, out string) error {
	var err error
	if config != "" {
		cfg, err := load.File(config)
		if err != nil {
			return err
		}
		p.Internal = envoy.HeaderFilterOf(cfg)
	}
	if p.Streamsub[0].Address, p.Streamsub[0].Port, err = hostPort(streamsub); err != nil {
		return fmt.Errorf("-streamsub: %w", err)
	}
	if p.OriginAddress, p.OriginPort, err = hostPort(origin); err != nil {
		return fmt.Errorf("-origin: %w", err)
	}
	b, err := envoy.Render(*p)
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// hostPort splits an IP:port address.
func hostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", addr)
	}
	if net.ParseIP(host) == nil {
		return "", 0, fmt.Errorf("%q: want an IP address (the cluster is STATIC)", addr)
	}
	return host, n, nil
}
