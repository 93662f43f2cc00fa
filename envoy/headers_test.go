package envoy

import (
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/streamsub/streamsub/config/load"
)

// filterChain is the part of a rendering this test reads: the listener's
// HTTP filters and, for the header_mutation ones, what they remove.
type filterChain struct {
	StaticResources struct {
		Listeners []struct {
			FilterChains []struct {
				Filters []struct {
					TypedConfig struct {
						HTTPFilters []httpFilter `yaml:"http_filters"`
					} `yaml:"typed_config"`
				} `yaml:"filters"`
			} `yaml:"filter_chains"`
		} `yaml:"listeners"`
	} `yaml:"static_resources"`
}

type httpFilter struct {
	Name        string `yaml:"name"`
	TypedConfig struct {
		Mutations struct {
			Request  []mutation `yaml:"request_mutations"`
			Response []mutation `yaml:"response_mutations"`
		} `yaml:"mutations"`
	} `yaml:"typed_config"`
}

type mutation struct {
	Remove        string `yaml:"remove"`
	RemoveOnMatch struct {
		KeyMatcher struct {
			Prefix     string `yaml:"prefix"`
			IgnoreCase bool   `yaml:"ignore_case"`
		} `yaml:"key_matcher"`
	} `yaml:"remove_on_match"`
}

// removed reads a filter's mutations back into a HeaderList; a prefix
// matcher that is case-sensitive is reported as a failure.
func removed(t *testing.T, ms []mutation) HeaderList {
	t.Helper()
	var l HeaderList
	for _, m := range ms {
		switch km := m.RemoveOnMatch.KeyMatcher; {
		case m.Remove != "":
			l.Names = append(l.Names, m.Remove)
		case km.Prefix != "":
			if !km.IgnoreCase {
				t.Errorf("prefix %q matched case-sensitively", km.Prefix)
			}
			l.Prefixes = append(l.Prefixes, km.Prefix)
		default:
			t.Errorf("mutation %+v removes nothing", m)
		}
	}
	return l
}

// TestSafetyNetMatchesConfig: the shipped renderings strip, in Envoy,
// exactly the internal headers of the example config's header_filter, the
// response ones in the first filter (last on the way out) and the request
// ones just before the router (last on the way in), so they cannot drift.
func TestSafetyNetMatchesConfig(t *testing.T) {
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := load.File(filepath.Join(root, ExampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	want := HeaderFilterOf(cfg)
	if want.Request.Empty() || want.Response.Empty() {
		t.Fatalf("%s has no header_filter to check against", ExampleConfig)
	}
	for file, p := range shipped(t) {
		t.Run(file, func(t *testing.T) {
			b, err := Render(p)
			if err != nil {
				t.Fatal(err)
			}
			var fc filterChain
			if err := yaml.Unmarshal(b, &fc); err != nil {
				t.Fatal(err)
			}
			fs := fc.StaticResources.Listeners[0].FilterChains[0].Filters[0].TypedConfig.HTTPFilters
			if len(fs) < 3 {
				t.Fatalf("%d HTTP filters", len(fs))
			}
			first, beforeRouter := fs[0], fs[len(fs)-2]
			if first.Name != "strip-internal-response-headers" || beforeRouter.Name != "strip-internal-request-headers" {
				t.Fatalf("filters %q first and %q before the router, want the two safety nets", first.Name, beforeRouter.Name)
			}
			for _, c := range []struct {
				dir       string
				got, want HeaderList
				wrongMuts []mutation
			}{
				{"response", removed(t, first.TypedConfig.Mutations.Response), want.Response, first.TypedConfig.Mutations.Request},
				{"request", removed(t, beforeRouter.TypedConfig.Mutations.Request), want.Request, beforeRouter.TypedConfig.Mutations.Response},
			} {
				if !slices.Equal(c.got.Names, c.want.Names) || !slices.Equal(c.got.Prefixes, c.want.Prefixes) {
					t.Errorf("%s: Envoy removes %+v, the config %+v", c.dir, c.got, c.want)
				}
				if len(c.wrongMuts) != 0 {
					t.Errorf("%s safety net also mutates the other direction: %+v", c.dir, c.wrongMuts)
				}
			}
		})
	}
}

// TestNoSafetyNetWithoutHeaderFilter: a config without internal headers
// renders no header_mutation filter.
func TestNoSafetyNetWithoutHeaderFilter(t *testing.T) {
	b, err := Render(Local())
	if err != nil {
		t.Fatal(err)
	}
	var fc filterChain
	if err := yaml.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	for _, f := range fc.StaticResources.Listeners[0].FilterChains[0].Filters[0].TypedConfig.HTTPFilters {
		if f.Name == "strip-internal-response-headers" || f.Name == "strip-internal-request-headers" {
			t.Errorf("filter %q rendered without a header filter", f.Name)
		}
	}
}
