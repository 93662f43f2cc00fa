package kubernetes

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/streamsub/streamsub/server"
)

// manifests are the decoded files of this directory, one object of each kind.
type manifests struct {
	configMap  *corev1.ConfigMap
	deployment *appsv1.Deployment
	service    *corev1.Service
	pdb        *policyv1.PodDisruptionBudget
	netpol     *networkingv1.NetworkPolicy
	extension  *egv1a1.EnvoyExtensionPolicy
}

// decodeStrict decodes data into obj as the API server does (field names
// case-sensitive), but fails on unknown or duplicate fields, which the API
// server would drop or merge; and it checks that apiVersion and kind are
// the ones of obj's type. (sigs.k8s.io/yaml.UnmarshalStrict alone is not
// enough: encoding/json matches names case-insensitively, so "failopen"
// would set failOpen.)
func decodeStrict(data []byte, obj any, apiVersion, kind string) error {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return err
	}
	strictErrs, err := sjson.UnmarshalStrict(js, obj, sjson.DisallowDuplicateFields, sjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if err := errors.Join(strictErrs...); err != nil {
		return err
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return err
	}
	if tm.APIVersion != apiVersion || tm.Kind != kind {
		return fmt.Errorf("%s %s decoded as %s %s", tm.APIVersion, tm.Kind, apiVersion, kind)
	}
	return nil
}

// into returns a decoder that decodes strictly into a new *T stored in dst.
func into[T any](dst **T) func(data []byte, apiVersion, kind string) error {
	return func(data []byte, apiVersion, kind string) error {
		*dst = new(T)
		return decodeStrict(data, *dst, apiVersion, kind)
	}
}

// load decodes every *.yaml file of the directory; a file of a kind this
// test does not know is an error, so nothing ships unchecked.
func load(t *testing.T) *manifests {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := &manifests{}
	kinds := []struct {
		apiVersion, kind string
		decode           func(data []byte, apiVersion, kind string) error
	}{
		{"v1", "ConfigMap", into(&m.configMap)},
		{"apps/v1", "Deployment", into(&m.deployment)},
		{"v1", "Service", into(&m.service)},
		{"policy/v1", "PodDisruptionBudget", into(&m.pdb)},
		{"networking.k8s.io/v1", "NetworkPolicy", into(&m.netpol)},
		{egv1a1.GroupVersion.String(), egv1a1.KindEnvoyExtensionPolicy, into(&m.extension)},
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(data, &tm); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		err = fmt.Errorf("apiVersion %q kind %q: not a kind this test knows", tm.APIVersion, tm.Kind)
		for _, k := range kinds {
			if k.apiVersion == tm.APIVersion && k.kind == tm.Kind {
				err = k.decode(data, k.apiVersion, k.kind)
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if m.configMap == nil || m.deployment == nil || m.service == nil || m.pdb == nil || m.netpol == nil || m.extension == nil {
		t.Fatalf("missing manifests: %+v", m)
	}
	return m
}

// TestDecodeStrict shows that the decoding refuses what the API server
// would drop: a misspelt field.
func TestDecodeStrict(t *testing.T) {
	const head = "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n"
	tests := []struct {
		name    string
		yaml    string
		wantErr string // "": decodes
	}{
		{"valid", head + "spec: {selector: {a: b}}\n", ""},
		{"misspelt field", head + "spec: {selectr: {a: b}}\n", `unknown field "spec.selectr"`},
		{"field in the wrong case", head + "spec: {Selector: {a: b}}\n", `unknown field "spec.Selector"`},
		{"duplicate key", head + "spec: {selector: {a: b}, selector: {c: d}}\n", "already set"},
		{"wrong kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n", "decoded as v1 Service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decodeStrict([]byte(tt.yaml), &corev1.Service{}, "v1", "Service")
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("decodeStrict: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// container returns the streamsub container and its serve settings.
func (m *manifests) container(t *testing.T) (corev1.Container, server.Settings) {
	t.Helper()
	cs := m.deployment.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("deployment: %d containers, want 1", len(cs))
	}
	c := cs[0]
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("container args %q: want serve ...", c.Args)
	}
	st := server.DefaultSettings()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	st.RegisterFlags(fs)
	if err := fs.Parse(c.Args[1:]); err != nil {
		t.Fatalf("container args %q: %v", c.Args, err)
	}
	return c, st
}

func TestDeploymentServesTheConfigMap(t *testing.T) {
	m := load(t)
	c, st := m.container(t)
	spec := m.deployment.Spec.Template.Spec
	var mounted string
	for _, vm := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil && v.ConfigMap.Name == m.configMap.Name {
				mounted = vm.MountPath
			}
		}
	}
	if mounted == "" {
		t.Fatalf("ConfigMap %s is not mounted in the container", m.configMap.Name)
	}
	dir, file := filepath.Split(st.ConfigPath)
	if filepath.Clean(dir) != filepath.Clean(mounted) {
		t.Errorf("-config %s is not in the ConfigMap's mount %s", st.ConfigPath, mounted)
	}
	rules, ok := m.configMap.Data[file]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s (-config %s)", m.configMap.Name, file, st.ConfigPath)
	}
	// The rules load: server.New compiles them as serve does.
	path := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(path, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	st.ConfigPath = path
	if _, err := server.New(st, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("the ConfigMap's %s does not load: %v", file, err)
	}
}

// TestDrainTimings: streamsub's drain delay outlasts what Envoy Gateway's
// health check and the kubelet's readiness probe need to take the Pod out
// of rotation, and the grace period outlasts the drain.
func TestDrainTimings(t *testing.T) {
	m := load(t)
	c, st := m.container(t)
	rp := c.ReadinessProbe
	if rp == nil || rp.GRPC == nil {
		t.Fatalf("readiness probe %+v: want gRPC health", rp)
	}
	if port := portOf(t, st.Listen); rp.GRPC.Port != port {
		t.Errorf("readiness probe on port %d, streamsub listens on %d", rp.GRPC.Port, port)
	}
	if d := time.Duration(rp.PeriodSeconds*rp.FailureThreshold) * time.Second; st.DrainDelay < d {
		t.Errorf("-drain-delay %v < readiness period × failure threshold %v", st.DrainDelay, d)
	}
	hc := m.extProc(t).BackendSettings.HealthCheck
	if hc == nil || hc.Active == nil || hc.Active.Type != egv1a1.ActiveHealthCheckerTypeGRPC {
		t.Fatalf("extProc backend health check %+v: want an active gRPC check", hc)
	}
	a := hc.Active
	detect := time.Duration(*a.UnhealthyThreshold)*duration(t, string(*a.Interval)) + duration(t, string(*a.Timeout))
	if st.DrainDelay < detect {
		t.Errorf("-drain-delay %v < Envoy's health check detection %s × %d + %s = %v",
			st.DrainDelay, *a.Interval, *a.UnhealthyThreshold, *a.Timeout, detect)
	}
	if hc.Passive == nil || hc.Passive.ConsecutiveGatewayErrors == nil {
		t.Errorf("extProc backend: want passive health checks ejecting on gateway errors")
	}
	grace := m.deployment.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil || time.Duration(*grace)*time.Second < st.DrainDelay+st.DrainTimeout {
		t.Errorf("terminationGracePeriodSeconds %v < -drain-delay + -drain-timeout = %v", grace, st.DrainDelay+st.DrainTimeout)
	}
}

// TestEnvoyReachesStreamsub: the extension policy's backend is the Service,
// whose selector picks the Deployment's Pods and whose port leads to the
// gRPC listener; Envoy's HTTP/2 settings are within streamsub's limits; the
// NetworkPolicy lets the gateway in; the PDB covers the Pods.
func TestEnvoyReachesStreamsub(t *testing.T) {
	m := load(t)
	c, st := m.container(t)
	podLabels := m.deployment.Spec.Template.Labels
	selects := func(sel map[string]string) bool {
		for k, v := range sel {
			if podLabels[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	if !selects(m.service.Spec.Selector) {
		t.Errorf("Service selector %v does not select the Pods %v", m.service.Spec.Selector, podLabels)
	}
	if m.pdb.Spec.Selector == nil || !selects(m.pdb.Spec.Selector.MatchLabels) {
		t.Errorf("PDB selector %v does not select the Pods", m.pdb.Spec.Selector)
	}
	if mu := m.pdb.Spec.MaxUnavailable; mu == nil || mu.IntValue() >= int(*m.deployment.Spec.Replicas) {
		t.Errorf("PDB maxUnavailable %v with %d replicas", mu, *m.deployment.Spec.Replicas)
	}

	ep := m.extProc(t)
	if len(ep.BackendRefs) != 1 {
		t.Fatalf("extProc backendRefs %+v: want the streamsub Service", ep.BackendRefs)
	}
	ref := ep.BackendRefs[0]
	if string(ref.Name) != m.service.Name || ref.Port == nil {
		t.Fatalf("extProc backend %s:%v, want Service %s", ref.Name, ref.Port, m.service.Name)
	}
	grpcPort := portOf(t, st.Listen)
	found := false
	for _, sp := range m.service.Spec.Ports {
		if sp.Port != int32(*ref.Port) {
			continue
		}
		found = true
		if target := containerPort(c, sp.TargetPort); target != grpcPort {
			t.Errorf("Service port %d leads to container port %d, streamsub listens on %d", sp.Port, target, grpcPort)
		}
	}
	if !found {
		t.Errorf("Service %s has no port %d", m.service.Name, *ref.Port)
	}
	if ep.FailOpen == nil || *ep.FailOpen || ep.ProcessingMode == nil || !ep.ProcessingMode.AllowModeOverride ||
		ep.ProcessingMode.Response == nil || ep.ProcessingMode.Response.Body == nil ||
		*ep.ProcessingMode.Response.Body != egv1a1.StreamedExtProcBodyProcessingMode {
		t.Errorf("extProc %+v: want fail closed, mode override allowed, response body Streamed (as envoy/envoy.yaml)", ep)
	}
	h2 := ep.BackendSettings.HTTP2
	if h2 == nil || h2.MaxConcurrentStreams == nil || int(*h2.MaxConcurrentStreams) > st.MaxConnStreams {
		t.Errorf("extProc http2 %+v: want maxConcurrentStreams ≤ -max-conn-streams %d", h2, st.MaxConnStreams)
	}
	if h2 == nil || h2.ConnectionKeepalive == nil || h2.ConnectionKeepalive.Interval == nil ||
		duration(t, string(*h2.ConnectionKeepalive.Interval)) < server.KeepaliveMinTime {
		t.Errorf("extProc http2 keepalive: want an interval ≥ streamsub's keepalive MinTime %v (else GOAWAY too_many_pings)", server.KeepaliveMinTime)
	}

	allowed := false
	for _, rule := range m.netpol.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port != nil && containerPort(c, *p.Port) == grpcPort && len(rule.From) > 0 {
				allowed = true
			}
		}
	}
	if m.netpol.Spec.PodSelector.MatchLabels == nil || !selects(m.netpol.Spec.PodSelector.MatchLabels) || !allowed {
		t.Errorf("NetworkPolicy does not admit a restricted source to the Pods' gRPC port %d", grpcPort)
	}
}

// extProc is the one ext_proc of the extension policy.
func (m *manifests) extProc(t *testing.T) egv1a1.ExtProc {
	t.Helper()
	if n := len(m.extension.Spec.ExtProc); n != 1 {
		t.Fatalf("EnvoyExtensionPolicy: %d extProc, want 1", n)
	}
	ep := m.extension.Spec.ExtProc[0]
	if ep.BackendSettings == nil {
		t.Fatal("extProc has no backendSettings")
	}
	return ep
}

// containerPort resolves a Service targetPort or NetworkPolicy port (number
// or name) to a port number of c.
func containerPort(c corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	return 0
}

func portOf(t *testing.T, hostport string) int32 {
	t.Helper()
	_, port, ok := strings.Cut(hostport, ":")
	var n int32
	if _, err := fmt.Sscan(port, &n); !ok || err != nil {
		t.Fatalf("address %q: no port", hostport)
	}
	return n
}

func duration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return d
}
