package convert

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/verify"
)

// copyWithChunkLength copies legacy_nc_simple (one compressed chunk) and
// rewrites its CompressionInfo.db with another chunk length: still one
// chunk, so the sstable stays valid and readable.
func copyWithChunkLength(t *testing.T, chunkLength int) string {
	t.Helper()
	dir := t.TempDir()
	src := fixtures.Table(t, "nc", "legacy_nc_simple")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "nc-1-big-CompressionInfo.db" {
			ci, err := reader.DecodeCompressionInfo(b, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(ci.ChunkOffsets) != 1 {
				t.Fatalf("fixture has %d chunks, want 1", len(ci.ChunkOffsets))
			}
			ci.ChunkLength = chunkLength
			if b = ci.Encode(true); b == nil {
				t.Fatal("re-encoding CompressionInfo.db failed")
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "nc-1-big-Data.db")
}

func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A chunk length of 2^30 is a valid power of two; buffers must follow the
// data (a few KiB here), not the chunk length: savings and convert used to
// reserve gigabytes for it, fatal under an address-space limit.
func TestHugeChunkLengthAllocatesByData(t *testing.T) {
	src := copyWithChunkLength(t, 1<<30)
	ref := copyWithChunkLength(t, 1<<16)
	to := format.MustVersion("oa")
	for _, a := range []reader.Access{reader.Buffered, reader.Mmap} {
		var errE, errC error
		var res *Result
		estimate := allocated(func() { _, errE = Estimate(src, Options{To: to, Access: a}) })
		out := filepath.Join(t.TempDir(), "out")
		convert := allocated(func() { res, errC = Convert(src, out, Options{To: to, Access: a, Verify: true}) })
		if errE != nil || errC != nil {
			t.Fatalf("%v: estimate %v, convert %v", a, errE, errC)
		}
		if r := verify.SSTable(res.Output, sstable.Options{}, nil); !r.OK() {
			t.Fatalf("%v: output does not verify: %v", a, r.Problems)
		}
		// The same table with 64 KiB chunks is the yardstick.
		refE := allocated(func() { _, errE = Estimate(ref, Options{To: to, Access: a}) })
		if errE != nil {
			t.Fatal(errE)
		}
		t.Logf("%v: estimate %d bytes allocated (64 KiB chunks: %d), convert+verify %d", a, estimate, refE, convert)
		const limit = 16 << 20
		if estimate > limit || convert > limit {
			t.Fatalf("%v: allocated %d (estimate) and %d (convert) bytes for %d bytes of data with 1 GiB chunks; limit %d",
				a, estimate, convert, fileSize(src), limit)
		}
	}
}
