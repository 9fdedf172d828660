package lz4fast_test

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pierrec/lz4/v4"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/benchbase"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/lz4fast"
	"github.com/sstabletool/sstabletool/reader"
)

// Every chunk Cassandra compressed in the real fixtures: decompress it,
// compress it again here, and expect Cassandra's exact bytes.
func TestReproducesCassandraChunks(t *testing.T) {
	chunks := 0
	for _, p := range fixtures.DataFiles(t) {
		ciPath := strings.TrimSuffix(p, "Data.db") + "CompressionInfo.db"
		ciBytes, err := os.ReadFile(ciPath)
		if err != nil {
			continue // uncompressed table
		}
		ci, err := reader.DecodeCompressionInfo(ciBytes, true)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, off := range ci.ChunkOffsets {
			end := int64(len(raw)) - 4
			if i+1 < len(ci.ChunkOffsets) {
				end = ci.ChunkOffsets[i+1] - 4
			}
			stored := raw[off:end]
			// Cassandra's LZ4Compressor: 4-byte little-endian length, then the block.
			n := int(binary.LittleEndian.Uint32(stored))
			plain := make([]byte, n)
			if _, err := lz4.UncompressBlock(stored[4:], plain); err != nil {
				t.Fatalf("%s chunk %d: %v", p, i, err)
			}
			got, err := lz4fast.Compress(nil, plain)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, stored[4:]) {
				t.Fatalf("%s chunk %d: %d bytes here, Cassandra wrote %d", filepath.Base(filepath.Dir(p)), i, len(got), len(stored)-4)
			}
			chunks++
		}
	}
	if chunks == 0 {
		t.Fatal("no compressed chunks found")
	}
	t.Logf("%d chunks reproduced byte for byte", chunks)
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	inputs := [][]byte{nil, []byte("a"), []byte("0123456789abc"), bytes.Repeat([]byte("abcd"), 5000)}
	for i := 0; i < 50; i++ {
		b := make([]byte, rng.Intn(60000))
		for j := range b {
			b[j] = "abcdefgh"[rng.Intn(1+rng.Intn(8))]
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		c, err := lz4fast.Compress(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(c) > lz4fast.CompressBound(len(in)) {
			t.Fatalf("%d bytes compressed to %d, bound %d", len(in), len(c), lz4fast.CompressBound(len(in)))
		}
		out := make([]byte, len(in))
		n, err := lz4.UncompressBlock(c, out)
		if err != nil || n != len(in) || !bytes.Equal(out, in) {
			t.Fatalf("round trip of %d bytes: n=%d err=%v", len(in), n, err)
		}
	}
	if _, err := lz4fast.Compress(nil, make([]byte, (64*1024+11))); err != lz4fast.ErrTooLarge {
		t.Fatalf("want lz4fast.ErrTooLarge, got %v", err)
	}
}

func FuzzCompress(f *testing.F) {
	f.Add([]byte("hello hello hello hello hello"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) >= (64*1024 + 11) {
			return
		}
		c, err := lz4fast.Compress(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, len(in))
		n, err := lz4.UncompressBlock(c, out)
		if len(in) == 0 {
			return
		}
		if err != nil || n != len(in) || !bytes.Equal(out, in) {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}

func BenchmarkCompress(b *testing.B) {
	in := bytes.Repeat([]byte("partition key, clustering 0123456789, value abcdefghij "), 300)[:16384]
	b.Run("lz4fast", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		dst := make([]byte, 0, lz4fast.CompressBound(len(in)))
		for i := 0; i < b.N; i++ {
			dst, _ = lz4fast.Compress(dst[:0], in)
		}
	})
	b.Run("pierrec", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		dst := make([]byte, lz4.CompressBlockBound(len(in)))
		var c lz4.Compressor
		for i := 0; i < b.N; i++ {
			c.CompressBlock(in, dst)
		}
	})
}

// BenchmarkCompressChunks compresses the chunks of real tables (the
// generated benchmark table, the fixtures; SSTABLE_BENCH names others:
// see package benchbase) with lz4fast and with pierrec/lz4's block
// compressor: the speed each has over the same input (MB/s of
// uncompressed bytes) and what each writes (out-%: compressed bytes over
// uncompressed; lz4fast writes liblz4's bytes, pierrec/lz4 other ones).
func BenchmarkCompressChunks(b *testing.B) {
	for _, p := range benchbase.Tables(b) {
		chunks := plainChunks(b, p, 32<<20)
		if len(chunks) == 0 {
			continue
		}
		var in int64
		for _, c := range chunks {
			in += int64(len(c))
		}
		b.Run(benchbase.Name(p)+"/lz4fast", func(b *testing.B) {
			b.SetBytes(in)
			var dst []byte
			var out int64
			for i := 0; i < b.N; i++ {
				out = 0
				for _, c := range chunks {
					dst, _ = lz4fast.Compress(dst[:0], c)
					out += int64(len(dst))
				}
			}
			b.ReportMetric(100*float64(out)/float64(in), "out-%")
		})
		b.Run(benchbase.Name(p)+"/pierrec", func(b *testing.B) {
			b.SetBytes(in)
			var c lz4.Compressor
			var out int64
			dst := make([]byte, lz4.CompressBlockBound(64<<10))
			for i := 0; i < b.N; i++ {
				out = 0
				for _, ch := range chunks {
					n, _ := c.CompressBlock(ch, dst)
					out += int64(n)
				}
			}
			b.ReportMetric(100*float64(out)/float64(in), "out-%")
		})
	}
}

// plainChunks is up to max bytes of p's chunks, decompressed (none for a
// table that is not LZ4-compressed).
func plainChunks(b *testing.B, p string, max int64) [][]byte {
	s, err := sstable.Open(p, sstable.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ci := s.Data().Info()
	if ci == nil || !strings.HasSuffix(ci.Compressor, "LZ4Compressor") || ci.ChunkLength > 64<<10 {
		return nil
	}
	var out [][]byte
	var total int64
	for off := int64(0); off < s.Data().Length() && total < max; off += int64(ci.ChunkLength) {
		c := s.Data().Cursor(off)
		n := int(min(int64(ci.ChunkLength), s.Data().Length()-off))
		chunk, err := c.Next(n)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, bytes.Clone(chunk))
		total += int64(n)
	}
	return out
}
