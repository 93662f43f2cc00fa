package envoy

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"github.com/streamsub/streamsub/config"
	"github.com/streamsub/streamsub/config/load"
)

// ExampleConfig is the streamsub config the shipped renderings go with,
// relative to the module root: their header safety net is rendered from it.
const ExampleConfig = "examples/streamsub.yaml"

// HeaderFilter is a streamsub header_filter as Envoy's header_mutation
// filter needs it.
type HeaderFilter struct {
	Request, Response HeaderList
}

// HeaderList holds exact header names and name prefixes, lower-case.
type HeaderList struct {
	Names, Prefixes []string
}

// Empty reports whether l removes nothing.
func (l HeaderList) Empty() bool { return len(l.Names) == 0 && len(l.Prefixes) == 0 }

// HeaderFilterOf returns cfg's header_filter. Like streamsub, it never
// removes host (Envoy keeps it as :authority).
func HeaderFilterOf(cfg *config.Config) HeaderFilter {
	list := func(names, prefixes []string) HeaderList {
		l := HeaderList{Prefixes: prefixes}
		for _, n := range names {
			if !strings.EqualFold(n, "host") {
				l.Names = append(l.Names, n)
			}
		}
		return l
	}
	return HeaderFilter{
		Request:  list(cfg.RequestHeaders.Names(), cfg.RequestHeaders.Prefixes()),
		Response: list(cfg.ResponseHeaders.Names(), cfg.ResponseHeaders.Prefixes()),
	}
}

// Shipped returns Renderings with the header safety net of ExampleConfig,
// which it loads from the module root root.
func Shipped(root string) (map[string]Params, error) {
	cfg, err := load.File(filepath.Join(root, ExampleConfig))
	if err != nil {
		return nil, fmt.Errorf("envoy: %w", err)
	}
	out := maps.Clone(Renderings)
	for file, p := range out {
		p.Internal = HeaderFilterOf(cfg)
		out[file] = p
	}
	return out, nil
}
