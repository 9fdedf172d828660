package benchbase

import (
	"os"
	"testing"

	"github.com/sstabletool/sstabletool/reader"
)

// Bare is the older baseline internal/dump's benchmark still uses: every
// stored chunk read into the heap once, decompressed by Pass without its
// CRC. It overstates shares (no mapping, no CRC); Floor replaces it.
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
