package sstable

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/reader"
)

// benchTables are the sstables the read-path benchmarks run on: the
// largest real fixtures (compressed legacy_nc_clust, uncompressed me
// tables), plus any sstables named in SSTABLE_BENCH (comma-separated
// Data.db paths, e.g. made by `sstabletool generate`). Each benchmark
// reports MB/s of uncompressed Data.db so that ratios against
// BenchmarkBareLZ4 on the same file are direct.
func benchTables(b *testing.B) []string {
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

func benchName(p string) string { return filepath.Base(filepath.Dir(p)) }

var accesses = []reader.Access{reader.Mmap, reader.Buffered}

// BenchmarkBareLZ4 decompresses every chunk of each compressed table with
// the same compressor and nothing else: the baseline.
func BenchmarkBareLZ4(b *testing.B) {
	for _, p := range benchTables(b) {
		s, err := Open(p, Options{})
		if err != nil {
			b.Fatal(err)
		}
		ci := s.Data.Info()
		if ci == nil {
			s.Close()
			continue
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		comp, err := reader.CompressorFor(ci.Compressor, ci.Options)
		if err != nil {
			b.Fatal(err)
		}
		var chunks [][]byte
		for i := range ci.ChunkOffsets {
			end := int64(len(raw)) - 4
			if i+1 < len(ci.ChunkOffsets) {
				end = ci.ChunkOffsets[i+1] - 4
			}
			chunks = append(chunks, raw[ci.ChunkOffsets[i]:end])
		}
		length := s.Data.Length()
		s.Close()
		b.Run(benchName(p), func(b *testing.B) {
			b.SetBytes(length)
			dst := make([]byte, 0, ci.ChunkLength)
			for i := 0; i < b.N; i++ {
				for _, c := range chunks {
					if len(c) >= ci.MaxCompressedLength && ci.MaxCompressedLength > 0 {
						continue // stored raw
					}
					if dst, err = comp.Decompress(dst[:0], c); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkScanPartitions is the partition-level scan behind `partitions`
// with row bodies skipped by their sizes.
func BenchmarkScanPartitions(b *testing.B) { benchScan(b, true) }

// BenchmarkScanPartitionsNoCRC is the same scan with chunk checksums off
// (Options.NoVerify), to show what the CRC32 of every chunk costs.
func BenchmarkScanPartitionsNoCRC(b *testing.B) {
	for _, p := range benchTables(b) {
		b.Run(benchName(p)+"/mmap", func(b *testing.B) {
			s, err := Open(p, Options{Access: reader.Mmap, NoVerify: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.SetBytes(s.Data.Length())
			for i := 0; i < b.N; i++ {
				if err := s.ScanPartitions(ScanOptions{SkipCells: true}, func(*PartitionSummary) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeAll decodes every row and cell (what `dump` does, minus JSON).
func BenchmarkDecodeAll(b *testing.B) { benchScan(b, false) }

func benchScan(b *testing.B, skipCells bool) {
	for _, p := range benchTables(b) {
		for _, a := range accesses {
			b.Run(benchName(p)+"/"+a.String(), func(b *testing.B) {
				s, err := Open(p, Options{Access: a})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				b.SetBytes(s.Data.Length())
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					var n int64
					if err := s.ScanPartitions(ScanOptions{SkipCells: skipCells}, func(ps *PartitionSummary) error {
						n += ps.Rows
						return nil
					}); err != nil {
						b.Fatal(err)
					}
					if n == 0 {
						b.Fatal("no rows")
					}
				}
			})
		}
	}
}

// BenchmarkLookup finds random existing keys through Summary.db and
// Index.db and decodes each partition's header, as `dump -k` does.
func BenchmarkLookup(b *testing.B) {
	for _, p := range benchTables(b) {
		for _, a := range accesses {
			b.Run(benchName(p)+"/"+a.String(), func(b *testing.B) {
				s, err := Open(p, Options{Access: a})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				var keys [][]byte
				if err := s.ScanPartitions(ScanOptions{SkipCells: true}, func(ps *PartitionSummary) error {
					keys = append(keys, append([]byte(nil), ps.Key...))
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewSource(1))
				var h rows.PartitionHeader
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					k := keys[rng.Intn(len(keys))]
					e, ok, err := s.Find(k)
					if err != nil || !ok {
						b.Fatalf("key %x: ok=%v err=%v", k, ok, err)
					}
					if _, err := s.PartitionAt(e.Position, &h); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
			})
		}
	}
}
