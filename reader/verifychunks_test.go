package reader_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

// TestVerifyChunksOnEveryCore: checking chunk ranges on several cores finds
// the bad chunks one pass finds, in the same order.
func TestVerifyChunksOnEveryCore(t *testing.T) {
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 1200
	res, err := generate.Generate(p, filepath.Join(t.TempDir(), "demo"), generate.Options{Version: format.MustVersion("nc"),
		Compression: &writer.Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 1024, MaxCompressedLength: 1<<31 - 1}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(res.DataPath)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 50; i++ {
		b[len(b)*i/50] ^= 0xFF
	}
	if err := os.WriteFile(res.DataPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(res.DataPath)
	base := filepath.Base(res.DataPath)
	ci := filepath.Join(dir, base[:len(base)-len("Data.db")]+"CompressionInfo.db")
	verify := func(procs int) []string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		d, err := reader.OpenData(res.DataPath, reader.Buffered, reader.DataOptions{CompressionInfoPath: ci, HasMaxCompressedLength: true, Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if n := len(d.Info().ChunkOffsets); n < 4*256 {
			t.Fatalf("%d chunks: too few for several ranges", n)
		}
		var out []string
		for _, err := range reader.VerifyChunks(d) {
			out = append(out, err.Error())
		}
		return out
	}
	want := verify(1)
	if len(want) < 40 {
		t.Fatalf("%d bad chunks found, 49 were damaged", len(want))
	}
	for _, procs := range []int{2, 3, 8} {
		if d := cmp.Diff(want, verify(procs)); d != "" {
			t.Errorf("GOMAXPROCS %d: errors differ from one pass's (-want +got):\n%s", procs, d)
		}
	}
}
