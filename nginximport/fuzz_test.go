package nginximport

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/streamsub/streamsub/nginxparse"
)

// FuzzImport checks that an import never panics, that a failed one names
// the file and line or says there is nothing to import, and that every
// configuration it writes is accepted by the configuration loader.
func FuzzImport(f *testing.F) {
	confs, _ := filepath.Glob("testdata/*.conf")
	for _, c := range confs {
		if data, err := os.ReadFile(c); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("server { server_name a.example; location / { sub_filter 'a' 'b'; } }"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Import(fstest.MapFS{"n.conf": {Data: data}}, "n.conf")
		if err != nil {
			var pe *nginxparse.Error
			if !errors.As(err, &pe) && err.Error() != "n.conf: no replace_filter, subs_filter or sub_filter rule applies to any request: nothing to import" {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		loadConfig(t, res.YAML, "fuzz.yaml")
	})
}
