package e2e

// compose_test.go validates docker-compose.yml without a Docker engine: it is
// loaded with compose-go (the reference implementation of the Compose spec)
// and cross-checked against the Envoy bootstrap it mounts. It runs in the
// plain unit tests (no build tag).

import (
	"context"
	"flag"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/streamsub/streamsub/server"
)

func loadCompose(t *testing.T, profiles ...string) *types.Project {
	t.Helper()
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	details := types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: "docker-compose.yml", Content: data}},
		Environment: types.Mapping{},
	}
	p, err := loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("streamsub", true)
		o.Profiles = profiles
		o.ResolvePaths = true
	})
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

// repoRoot is the module root: the directory above e2e/.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// flagValue returns the value of -name (or --name) in a command line.
func flagValue(args []string, name string) string {
	for i, a := range args {
		a = strings.TrimPrefix(a, "-")
		a = strings.TrimPrefix(a, "-")
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func TestComposeServices(t *testing.T) {
	p := loadCompose(t)
	for _, name := range []string{"envoy", "streamsub", "origin"} {
		if _, err := p.GetService(name); err != nil {
			t.Errorf("service %q: %v", name, err)
		}
	}
	if _, err := p.GetService("wrk"); err == nil {
		t.Errorf("service wrk is active without the load profile")
	}
	withLoad := loadCompose(t, "load")
	wrk, err := withLoad.GetService("wrk")
	if err != nil {
		t.Fatalf("load profile: %v", err)
	}
	if !slices.ContainsFunc(wrk.Command, func(a string) bool { return strings.HasPrefix(a, "http://envoy:") }) {
		t.Errorf("wrk command %q does not target the envoy service", wrk.Command)
	}

	envoy, _ := p.GetService("envoy")
	if !strings.HasPrefix(envoy.Image, "envoyproxy/envoy:v1.40.") {
		t.Errorf("envoy image %q: want the official image of Envoy 1.40 (the version the e2e tests run)", envoy.Image)
	}

	ss, _ := p.GetService("streamsub")
	if ss.Build == nil || ss.Build.Target != "streamsub" {
		t.Errorf("streamsub must be built from the repo Dockerfile (target streamsub), got %+v", ss.Build)
	}
	if ss.HealthCheck == nil || len(ss.HealthCheck.Test) == 0 {
		t.Errorf("streamsub has no healthcheck")
	}
	dockerfile, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stage(string(dockerfile), "streamsub"), "\nUSER ") {
		t.Errorf("Dockerfile stage streamsub does not switch to a non-root USER")
	}
	// The mounted streamsub config must be the repo's example config.
	if src := bindSource(ss, "/etc/streamsub/streamsub.yaml"); src != filepath.Join(repoRoot(t), "examples", "streamsub.yaml") {
		t.Errorf("streamsub config mount source = %q, want examples/streamsub.yaml", src)
	}
}

// stage returns the text of one Dockerfile build stage.
func stage(dockerfile, name string) string {
	_, rest, ok := strings.Cut(dockerfile, " AS "+name+"\n")
	if !ok {
		return ""
	}
	end := strings.Index(rest, "\nFROM ")
	if end < 0 {
		return rest
	}
	return rest[:end]
}

func bindSource(s types.ServiceConfig, target string) string {
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && v.Target == target {
			return v.Source
		}
	}
	return ""
}

// envoyBootstrap is the part of an Envoy bootstrap this test reads.
type envoyBootstrap struct {
	StaticResources struct {
		Listeners []struct {
			Name    string `yaml:"name"`
			Address struct {
				SocketAddress socketAddress `yaml:"socket_address"`
			} `yaml:"address"`
			FilterChains []struct {
				Filters []struct {
					Name        string `yaml:"name"`
					TypedConfig struct {
						HTTPFilters []struct {
							Name        string `yaml:"name"`
							TypedConfig struct {
								GRPCService struct {
									EnvoyGRPC struct {
										ClusterName string `yaml:"cluster_name"`
									} `yaml:"envoy_grpc"`
								} `yaml:"grpc_service"`
							} `yaml:"typed_config"`
						} `yaml:"http_filters"`
					} `yaml:"typed_config"`
				} `yaml:"filters"`
			} `yaml:"filter_chains"`
		} `yaml:"listeners"`
		Clusters []struct {
			Name                          string `yaml:"name"`
			Type                          string `yaml:"type"`
			TypedExtensionProtocolOptions map[string]struct {
				ExplicitHTTPConfig struct {
					HTTP2ProtocolOptions struct {
						MaxConcurrentStreams int `yaml:"max_concurrent_streams"`
						ConnectionKeepalive  struct {
							Interval string `yaml:"interval"`
						} `yaml:"connection_keepalive"`
					} `yaml:"http2_protocol_options"`
				} `yaml:"explicit_http_config"`
			} `yaml:"typed_extension_protocol_options"`
			HealthChecks []struct {
				Interval           string    `yaml:"interval"`
				Timeout            string    `yaml:"timeout"`
				UnhealthyThreshold int       `yaml:"unhealthy_threshold"`
				GRPCHealthCheck    *struct{} `yaml:"grpc_health_check"`
			} `yaml:"health_checks"`
			OutlierDetection *struct {
				ConsecutiveGatewayFailure          int `yaml:"consecutive_gateway_failure"`
				EnforcingConsecutiveGatewayFailure int `yaml:"enforcing_consecutive_gateway_failure"`
			} `yaml:"outlier_detection"`
			LoadAssignment struct {
				Endpoints []struct {
					LbEndpoints []struct {
						Endpoint struct {
							Address struct {
								SocketAddress socketAddress `yaml:"socket_address"`
							} `yaml:"address"`
						} `yaml:"endpoint"`
					} `yaml:"lb_endpoints"`
				} `yaml:"endpoints"`
			} `yaml:"load_assignment"`
		} `yaml:"clusters"`
	} `yaml:"static_resources"`
}

type socketAddress struct {
	Address   string `yaml:"address"`
	PortValue int    `yaml:"port_value"`
}

// clusterAddresses returns the endpoint addresses of cluster name.
func (b *envoyBootstrap) clusterAddresses(name string) []socketAddress {
	var out []socketAddress
	for _, c := range b.StaticResources.Clusters {
		if c.Name != name {
			continue
		}
		for _, e := range c.LoadAssignment.Endpoints {
			for _, lb := range e.LbEndpoints {
				out = append(out, lb.Endpoint.Address.SocketAddress)
			}
		}
	}
	return out
}

// extProcClusters returns the clusters named by every ext_proc filter.
func (b *envoyBootstrap) extProcClusters() []string {
	var out []string
	for _, l := range b.StaticResources.Listeners {
		for _, fc := range l.FilterChains {
			for _, f := range fc.Filters {
				for _, hf := range f.TypedConfig.HTTPFilters {
					if hf.Name == "envoy.filters.http.ext_proc" {
						out = append(out, hf.TypedConfig.GRPCService.EnvoyGRPC.ClusterName)
					}
				}
			}
		}
	}
	return out
}

// TestComposeMatchesEnvoyConfig checks that the Envoy service mounts the
// repo's envoy/envoy.yaml, publishes its listener, and that the ext_proc and
// origin clusters there point at the compose services and their ports.
func TestComposeMatchesEnvoyConfig(t *testing.T) {
	p := loadCompose(t)
	envoy, _ := p.GetService("envoy")
	confPath := flagValue(envoy.Command, "c")
	if confPath == "" {
		t.Fatalf("envoy command %q has no -c", envoy.Command)
	}
	repoConf := filepath.Join(repoRoot(t), "envoy", "envoy.yaml")
	if src := bindSource(envoy, confPath); src != repoConf {
		t.Fatalf("envoy mounts %q at %s, want %s", src, confPath, repoConf)
	}
	data, err := os.ReadFile(repoConf)
	if err != nil {
		t.Fatal(err)
	}
	var boot envoyBootstrap
	if err := yaml.Unmarshal(data, &boot); err != nil {
		t.Fatalf("%s: %v", repoConf, err)
	}

	// The listener port is published (on loopback) by the envoy service.
	var listenerPorts []uint32
	for _, l := range boot.StaticResources.Listeners {
		listenerPorts = append(listenerPorts, uint32(l.Address.SocketAddress.PortValue))
	}
	published := false
	for _, pc := range envoy.Ports {
		if slices.Contains(listenerPorts, pc.Target) {
			published = true
			if pc.HostIP != "127.0.0.1" {
				t.Errorf("envoy port %d published on %q, want 127.0.0.1", pc.Target, pc.HostIP)
			}
		}
	}
	if !published {
		t.Errorf("no envoy listener port %v is published by the envoy service (%+v)", listenerPorts, envoy.Ports)
	}

	clusters := boot.extProcClusters()
	if len(clusters) == 0 {
		t.Fatalf("%s: no envoy.filters.http.ext_proc filter", repoConf)
	}
	for _, name := range clusters {
		checkClusterTargets(t, p, &boot, name, "streamsub", "listen")
	}
	checkClusterTargets(t, p, &boot, originCluster(t, &boot), "origin", "listen")
}

// loadBootstrap reads the Envoy config that compose mounts.
func loadBootstrap(t *testing.T) *envoyBootstrap {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var boot envoyBootstrap
	if err := yaml.Unmarshal(data, &boot); err != nil {
		t.Fatalf("envoy/envoy.yaml: %v", err)
	}
	return &boot
}

// serveSettings parses the serve command line of a compose service (or a
// container's args) the way streamsub does.
func serveSettings(t *testing.T, command []string) server.Settings {
	t.Helper()
	if len(command) == 0 || command[0] != "serve" {
		t.Fatalf("command %q does not run streamsub serve", command)
	}
	st := server.DefaultSettings()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	st.RegisterFlags(fs)
	if err := fs.Parse(command[1:]); err != nil {
		t.Fatalf("serve flags %q: %v", command[1:], err)
	}
	return st
}

func parseDuration(t *testing.T, what, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s %q: %v", what, s, err)
	}
	return d
}

// TestComposeReplicas checks that streamsub can run as several replicas
// behind the Envoy of envoy/envoy.yaml: nothing fixed per container, Envoy
// resolving every replica and health-checking each, a drain delay that
// outlasts Envoy's health check, a stop grace period that outlasts the
// drain, and Envoy's HTTP/2 settings within streamsub's limits.
func TestComposeReplicas(t *testing.T) {
	p := loadCompose(t)
	ss, _ := p.GetService("streamsub")
	if ss.ContainerName != "" {
		t.Errorf("streamsub has container_name %q: it could not be scaled", ss.ContainerName)
	}
	for _, pc := range ss.Ports {
		if pc.Published != "" {
			t.Errorf("streamsub publishes port %d on host port %s: a second replica could not bind it", pc.Target, pc.Published)
		}
		if pc.HostIP != "127.0.0.1" {
			t.Errorf("streamsub publishes port %d on %q, want 127.0.0.1 only", pc.Target, pc.HostIP)
		}
	}
	if ss.Deploy == nil || ss.Deploy.Replicas == nil || *ss.Deploy.Replicas < 2 {
		t.Errorf("streamsub deploy.replicas: want at least 2 so the demo runs replicas")
	}
	st := serveSettings(t, ss.Command)
	if ss.StopGracePeriod == nil || time.Duration(*ss.StopGracePeriod) < st.DrainDelay+st.DrainTimeout {
		t.Errorf("streamsub stop_grace_period %v: want at least -drain-delay + -drain-timeout = %v (else the drain ends in SIGKILL)",
			ss.StopGracePeriod, st.DrainDelay+st.DrainTimeout)
	}

	boot := loadBootstrap(t)
	for _, c := range boot.StaticResources.Clusters {
		if c.Name != "streamsub" {
			continue
		}
		if c.Type != "STRICT_DNS" {
			t.Errorf("cluster streamsub: type %s, want STRICT_DNS (resolves every replica)", c.Type)
		}
		if len(c.HealthChecks) != 1 || c.HealthChecks[0].GRPCHealthCheck == nil {
			t.Fatalf("cluster streamsub: want one gRPC health check, got %+v", c.HealthChecks)
		}
		hc := c.HealthChecks[0]
		detect := time.Duration(hc.UnhealthyThreshold)*parseDuration(t, "health check interval", hc.Interval) +
			parseDuration(t, "health check timeout", hc.Timeout)
		if st.DrainDelay < detect {
			t.Errorf("streamsub -drain-delay %v is shorter than Envoy's health check needs to see it drain (%s × %d + %s = %v)",
				st.DrainDelay, hc.Interval, hc.UnhealthyThreshold, hc.Timeout, detect)
		}
		if od := c.OutlierDetection; od == nil || od.ConsecutiveGatewayFailure == 0 || od.EnforcingConsecutiveGatewayFailure == 0 {
			t.Errorf("cluster streamsub: want outlier_detection ejecting on gateway failures, got %+v", od)
		}
		opts, ok := c.TypedExtensionProtocolOptions["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]
		if !ok {
			t.Fatalf("cluster streamsub: no HttpProtocolOptions")
		}
		h2 := opts.ExplicitHTTPConfig.HTTP2ProtocolOptions
		if ping := parseDuration(t, "connection_keepalive interval", h2.ConnectionKeepalive.Interval); ping < server.KeepaliveMinTime {
			t.Errorf("Envoy pings every %v, more often than streamsub tolerates (%v): GOAWAY too_many_pings", ping, server.KeepaliveMinTime)
		}
		if h2.MaxConcurrentStreams == 0 || h2.MaxConcurrentStreams > st.MaxConnStreams {
			t.Errorf("Envoy max_concurrent_streams %d: want 1..%d (streamsub's -max-conn-streams)", h2.MaxConcurrentStreams, st.MaxConnStreams)
		}
		return
	}
	t.Fatal("envoy/envoy.yaml has no streamsub cluster")
}

// originCluster finds the cluster whose endpoints are the origin service.
func originCluster(t *testing.T, boot *envoyBootstrap) string {
	for _, c := range boot.StaticResources.Clusters {
		for _, a := range boot.clusterAddresses(c.Name) {
			if a.Address == "origin" {
				return c.Name
			}
		}
	}
	t.Fatalf("no cluster points at the origin service")
	return ""
}

// checkClusterTargets asserts every endpoint of cluster is compose service
// svc, on the port that service's -listenFlag listens on.
func checkClusterTargets(t *testing.T, p *types.Project, boot *envoyBootstrap, cluster, svc, listenFlag string) {
	t.Helper()
	addrs := boot.clusterAddresses(cluster)
	if len(addrs) == 0 {
		t.Errorf("cluster %q has no endpoints", cluster)
		return
	}
	s, err := p.GetService(svc)
	if err != nil {
		t.Errorf("cluster %q: %v", cluster, err)
		return
	}
	listen := flagValue(s.Command, listenFlag)
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		t.Errorf("service %s: -%s %q: %v", svc, listenFlag, listen, err)
		return
	}
	for _, a := range addrs {
		if a.Address != svc || strconv.Itoa(a.PortValue) != port {
			t.Errorf("cluster %q endpoint %s:%d, want %s:%s (the %s service's -%s)", cluster, a.Address, a.PortValue, svc, port, svc, listenFlag)
		}
	}
}
