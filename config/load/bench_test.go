package load

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParse is the cost of one (re)load of the example-sized file.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testdata, "good.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parse(data, "good.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
