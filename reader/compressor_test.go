package reader

import (
	"bytes"
	stdzlib "compress/zlib"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

var allCompressors = []struct {
	class   string
	options map[string]string
}{
	{"LZ4Compressor", nil},
	{"org.apache.cassandra.io.compress.LZ4Compressor", map[string]string{"lz4_compressor_type": "high", "lz4_high_compressor_level": "12"}},
	{"SnappyCompressor", nil},
	{"DeflateCompressor", nil},
	{"ZstdCompressor", nil},
	{"ZstdCompressor", map[string]string{"compression_level": "-5"}},
	{"ZstdCompressor", map[string]string{"compression_level": "19"}},
	{"NoopCompressor", nil},
}

func compressorInputs() map[string][]byte {
	r := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 20000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	return map[string][]byte{
		"empty":     {},
		"one byte":  {42},
		"zeros 16K": make([]byte, 16384),
		"rows 16K":  syntheticRows(16384),
		"random":    random,
		"rows 64K":  syntheticRows(65536),
	}
}

func TestCompressorsRoundTrip(t *testing.T) {
	for _, cc := range allCompressors {
		c, err := CompressorFor(cc.class, cc.options)
		if err != nil {
			t.Fatalf("%s %v: %v", cc.class, cc.options, err)
		}
		if !strings.HasSuffix(cc.class, c.Name()) {
			t.Errorf("%s: Name() = %q", cc.class, c.Name())
		}
		for name, in := range compressorInputs() {
			prefix := []byte("keep")
			z, err := c.Compress(append([]byte(nil), prefix...), in)
			if err != nil || !bytes.HasPrefix(z, prefix) {
				t.Fatalf("%s %s: Compress: %v", cc.class, name, err)
			}
			out, err := c.Decompress(append([]byte(nil), prefix...), z[len(prefix):])
			if err != nil {
				t.Fatalf("%s %s: Decompress: %v", cc.class, name, err)
			}
			if !bytes.Equal(out[len(prefix):], in) || !bytes.HasPrefix(out, prefix) {
				t.Fatalf("%s %s: round trip differs", cc.class, name)
			}
			// The limited path used by Data accepts exactly the length.
			ld := c.(limitedDecompressor)
			if _, err := ld.decompressLimit(nil, z[len(prefix):], len(in)); err != nil {
				t.Fatalf("%s %s: decompressLimit(exact): %v", cc.class, name, err)
			}
			if len(in) > 0 {
				if _, err := ld.decompressLimit(nil, z[len(prefix):], len(in)-1); err == nil {
					t.Fatalf("%s %s: decompressLimit(len-1) succeeded", cc.class, name)
				}
			}
		}
	}
}

// TestCompressorsMatchIndependentDecoders checks our output with decoders
// that do not share our framing code: the layout Cassandra reads.
func TestCompressorsMatchIndependentDecoders(t *testing.T) {
	in := syntheticRows(16384)
	get := func(class string) Compressor {
		c, err := CompressorFor(class, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// LZ4: 4-byte little-endian length, then a raw LZ4 block.
	z, _ := get("LZ4Compressor").Compress(nil, in)
	if binary.LittleEndian.Uint32(z) != uint32(len(in)) {
		t.Errorf("LZ4 prefix %x, want little-endian %d", z[:4], len(in))
	}
	out := make([]byte, len(in))
	if n, err := lz4.UncompressBlock(z[4:], out); err != nil || n != len(in) || !bytes.Equal(out, in) {
		t.Errorf("LZ4 block does not decode independently: %d, %v", n, err)
	}
	// Java's lz4 writes one zero token for an empty chunk.
	if got, err := get("LZ4Compressor").Decompress(nil, []byte{0, 0, 0, 0, 0}); err != nil || len(got) != 0 {
		t.Errorf("empty Java LZ4 chunk: %v, %v", got, err)
	}
	// Snappy: a standard block (no S2 extensions) for xerial snappy.
	z, _ = get("SnappyCompressor").Compress(nil, in)
	if out, err := snappy.DecodeStrict(nil, z); err != nil || !bytes.Equal(out, in) {
		t.Errorf("Snappy block rejected by a strict decoder: %v", err)
	}
	// Deflate: a zlib stream, as java.util.zip.Deflater writes by default.
	z, _ = get("DeflateCompressor").Compress(nil, in)
	zr, err := stdzlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := io.ReadAll(zr); err != nil || !bytes.Equal(out, in) {
		t.Errorf("Deflate stream rejected by compress/zlib: %v", err)
	}
	// Zstd: one frame with a content checksum.
	z, _ = get("ZstdCompressor").Compress(nil, in)
	var h zstd.Header
	if err := h.Decode(z); err != nil || !h.HasCheckSum {
		t.Errorf("Zstd frame header %+v, %v: want a checksum", h, err)
	}
}

func TestCompressorFor(t *testing.T) {
	bad := []struct {
		class   string
		options map[string]string
		want    string
	}{
		{"GzipCompressor", nil, "unknown compressor class"},
		{"com.example.LZ4Compressor", nil, "unknown compressor class"},
		{"", nil, "unknown compressor class"},
		{"LZ4Compressor", map[string]string{"chunk_length_in_kb": "16"}, "unknown compression option"},
		{"LZ4Compressor", map[string]string{"lz4_compressor_type": "medium"}, "fast or high"},
		{"LZ4Compressor", map[string]string{"lz4_high_compressor_level": "18"}, "1 to 17"},
		{"ZstdCompressor", map[string]string{"compression_level": "23"}, "-131072 to 22"},
		{"SnappyCompressor", map[string]string{"x": "y"}, "unknown compression option"},
		{"NoopCompressor", map[string]string{"x": "y"}, "unknown compression option"},
	}
	for _, b := range bad {
		_, err := CompressorFor(b.class, b.options)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("CompressorFor(%q, %v) = %v, want error containing %q", b.class, b.options, err, b.want)
		}
	}
	// Every class Compressors names opens, by its simple and its full name.
	if len(Compressors()) != 5 {
		t.Errorf("Compressors() = %v, want Cassandra's five", Compressors())
	}
	for _, n := range Compressors() {
		short, err1 := CompressorFor(n, nil)
		long, err2 := CompressorFor("org.apache.cassandra.io.compress."+n, nil)
		if err1 != nil || err2 != nil || short.Name() != n || long.Name() != n {
			t.Errorf("%s: %v %v", n, err1, err2)
		}
	}
}

// TestLZ4DecompressFixtureChunks decompresses every real chunk directly
// (not through Data) and checks the lengths Cassandra promised.
func TestLZ4DecompressFixtureChunks(t *testing.T) {
	c, _ := CompressorFor("LZ4Compressor", nil)
	for _, f := range fixtureTables(t) {
		if f.ci == "" {
			continue
		}
		ci, _ := os.ReadFile(f.ci)
		data, _ := os.ReadFile(f.data)
		info, err := DecodeCompressionInfo(ci, true)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for i, off := range info.ChunkOffsets {
			end := int64(len(data))
			if i+1 < len(info.ChunkOffsets) {
				end = info.ChunkOffsets[i+1]
			}
			out, err := c.Decompress(nil, data[off:end-4])
			if err != nil {
				t.Fatalf("%s chunk %d: %v", f.name, i, err)
			}
			if i+1 < len(info.ChunkOffsets) && len(out) != info.ChunkLength {
				t.Fatalf("%s chunk %d: %d bytes", f.name, i, len(out))
			}
			total += int64(len(out))
		}
		if total != info.DataLength {
			t.Errorf("%s: chunks decompress to %d bytes, CompressionInfo says %d", f.name, total, info.DataLength)
		}
	}
}

// TestDecompressClaimsDoNotAllocate feeds length fields that claim far more
// than the bytes can hold: each must fail without allocating the claim.
func TestDecompressClaimsDoNotAllocate(t *testing.T) {
	lz4Bomb := []byte{0xFF, 0xFF, 0xFF, 0x3F, 0x00} // claims 1 GiB from 1 byte
	snappyBomb := []byte{0x80, 0x80, 0x80, 0x80, 0x04, 0x00}
	for _, c := range []struct {
		class string
		in    []byte
	}{{"LZ4Compressor", lz4Bomb}, {"SnappyCompressor", snappyBomb}} {
		comp, _ := CompressorFor(c.class, nil)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := comp.Decompress(nil, c.in)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s accepted a length bomb", c.class)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%s allocated %d bytes for a %d-byte input", c.class, grew, len(c.in))
		}
	}
	// A real zstd frame of 1 MiB of zeros, asked for at most 1000 bytes.
	zc, _ := CompressorFor("ZstdCompressor", nil)
	z, _ := zc.Compress(nil, make([]byte, 1<<20))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := zc.(limitedDecompressor).decompressLimit(nil, z, 1000)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Error("zstd limit ignored")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<10 {
		t.Errorf("zstd allocated %d bytes under a 1000-byte limit", grew)
	}
}
