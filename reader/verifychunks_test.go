package reader_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// A Data whose chunks VerifyChunks found sound reads them without checking
// each CRC32 again; one with a bad chunk still checks every read, so the
// damage VerifyChunks reported is met again by a read, as without it.
func TestVerifyChunksThenRead(t *testing.T) {
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 200
	res, err := generate.Generate(p, filepath.Join(t.TempDir(), "demo"), generate.Options{Version: format.MustVersion("nc"),
		Compression: &writer.Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 4096, MaxCompressedLength: 1<<31 - 1}})
	if err != nil {
		t.Fatal(err)
	}
	dir, base := filepath.Dir(res.DataPath), filepath.Base(res.DataPath)
	ci := filepath.Join(dir, base[:len(base)-len("Data.db")]+"CompressionInfo.db")
	readAll := func(damage bool) (verifyErrs []error, plain []byte, readErr error) {
		for _, a := range []reader.Access{reader.Mmap, reader.Buffered} {
			d, err := reader.OpenData(res.DataPath, a, reader.DataOptions{CompressionInfoPath: ci, HasMaxCompressedLength: true, Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			verifyErrs = reader.VerifyChunks(d)
			plain = make([]byte, d.Length())
			_, readErr = d.ReadAt(plain, 0)
			d.Close()
			if damage != (readErr != nil) {
				t.Fatalf("%v, damaged %v: read error %v after VerifyChunks %v", a, damage, readErr, verifyErrs)
			}
		}
		return verifyErrs, plain, readErr
	}
	errs, clean, _ := readAll(false)
	if len(errs) != 0 {
		t.Fatalf("VerifyChunks on a sound table: %v", errs)
	}
	b, err := os.ReadFile(res.DataPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(clean) == 0 || len(b) < 3*4096/2 {
		t.Fatalf("table too small (%d bytes stored)", len(b))
	}
	b[len(b)/2] ^= 0xFF
	if err := os.WriteFile(res.DataPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	errs, _, readErr := readAll(true)
	if len(errs) != 1 || !strings.Contains(readErr.Error(), "CRC") {
		t.Fatalf("VerifyChunks found %v; the read after it: %v", errs, readErr)
	}
}
