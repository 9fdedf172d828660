// Package benchbase is what the read-path benchmarks share: the tables
// they run on and the baseline they are measured against, a pass that
// decompresses every stored chunk of Data.db and does nothing else. A
// benchmark that times its own work and this pass in the same loop reports
// ratios that survive a noisy shared machine.
package benchbase

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/reader"
)

// Tables are the sstables the read-path benchmarks run on: the largest
// real fixtures (compressed legacy_nc_clust, uncompressed me tables), plus
// any sstables named in SSTABLE_BENCH (comma-separated Data.db paths, e.g.
// made by `sstabletool generate`). It skips the benchmark when there are
// none.
func Tables(b *testing.B) []string {
	var out []string
	if r := fixtures.Root(); r != "" {
		out = append(out,
			filepath.Join(r, "cassandra/nc/legacy_nc_clust/nc-1-big-Data.db"),
			filepath.Join(r, "cassandra/me-collections/utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91/me-1-big-Data.db"))
	}
	if env := os.Getenv("SSTABLE_BENCH"); env != "" {
		out = append(out, strings.Split(env, ",")...)
	}
	if len(out) == 0 {
		b.Skip("no sstables: set SSTABLE_BENCH or provide ../shared/testdata")
	}
	return out
}

// Name is the sub-benchmark name of a table: its folder.
func Name(p string) string { return filepath.Base(filepath.Dir(p)) }

// Bare is the baseline of one compressed table: every stored chunk read
// into memory once, decompressed by Pass with the table's compressor.
type Bare struct {
	comp        reader.Compressor
	chunks      [][]byte
	chunkLength int
	Length      int64 // uncompressed Data.db bytes
}

// Load reads d's chunks for the baseline; it returns nil for an
// uncompressed table, which has no baseline.
func Load(b *testing.B, d *reader.Data) *Bare {
	ci := d.Info()
	if ci == nil {
		return nil
	}
	raw, err := os.ReadFile(d.Path())
	if err != nil {
		b.Fatal(err)
	}
	comp, err := reader.CompressorFor(ci.Compressor, ci.Options)
	if err != nil {
		b.Fatal(err)
	}
	bl := &Bare{comp: comp, chunkLength: ci.ChunkLength, Length: d.Length()}
	for i := range ci.ChunkOffsets {
		end := int64(len(raw)) - 4
		if i+1 < len(ci.ChunkOffsets) {
			end = ci.ChunkOffsets[i+1] - 4
		}
		c := raw[ci.ChunkOffsets[i]:end]
		if len(c) >= ci.MaxCompressedLength && ci.MaxCompressedLength > 0 {
			continue // stored raw: nothing to decompress
		}
		bl.chunks = append(bl.chunks, c)
	}
	return bl
}

// Buffer returns a destination buffer for Pass.
func (bl *Bare) Buffer() []byte { return make([]byte, 0, bl.chunkLength) }

// Pass decompresses every chunk once into dst (reused) and returns it.
func (bl *Bare) Pass(b *testing.B, dst []byte) []byte {
	var err error
	for _, c := range bl.chunks {
		if dst, err = bl.comp.Decompress(dst[:0], c); err != nil {
			b.Fatal(err)
		}
	}
	return dst
}
