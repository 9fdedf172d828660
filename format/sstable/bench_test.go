package sstable

import (
	"io"
	"math/rand"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/benchbase"
	"github.com/sstabletool/sstabletool/reader"
)

func benchTables(b *testing.B) []string { return benchbase.Tables(b) }

func benchName(p string) string { return benchbase.Name(p) }

var accesses = []reader.Access{reader.Mmap, reader.Buffered}

// loadBare returns p's baseline (benchbase.Bare), or nil for an
// uncompressed table.
func loadBare(b *testing.B, p string) *benchbase.Bare {
	s, err := Open(p, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	return benchbase.Load(b, s.data)
}

// BenchmarkBareLZ4 decompresses every chunk of each compressed table with
// the same compressor and nothing else: the baseline.
func BenchmarkBareLZ4(b *testing.B) {
	for _, p := range benchTables(b) {
		bl := loadBare(b, p)
		if bl == nil {
			continue
		}
		b.Run(benchName(p), func(b *testing.B) {
			b.SetBytes(bl.Length)
			dst := bl.Buffer()
			for i := 0; i < b.N; i++ {
				dst = bl.Pass(b, dst)
			}
		})
	}
}

// BenchmarkVsBareLZ4 reports the ratios directly: each round
// runs the bare-LZ4 pass, the partition-level scan and the full cell
// decode (mmap, chunk CRCs checked) back to back on the same table, so
// that all three see the same machine; scan-% and decode-% are their
// throughputs as percentages of the bare pass's over all rounds. On a
// shared machine this is steadier than dividing separate benchmarks.
//
//	SSTABLE_BENCH=/tmp/big/nc-1-big-Data.db go test ./format/sstable \
//	    -run '^$' -bench VsBareLZ4 -benchtime 5x -cpu 1
func BenchmarkVsBareLZ4(b *testing.B) {
	for _, p := range benchTables(b) {
		bl := loadBare(b, p)
		if bl == nil {
			continue
		}
		b.Run(benchName(p), func(b *testing.B) {
			s, err := Open(p, Options{Access: reader.Mmap})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.SetBytes(3 * bl.Length)
			dst := bl.Buffer()
			var bare, scan, decode time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				dst = bl.Pass(b, dst)
				t1 := time.Now()
				if err := s.ScanPartitions(ScanOptions{SkipCells: true}, func(*PartitionSummary) error { return nil }); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if err := s.ScanPartitions(ScanOptions{}, func(*PartitionSummary) error { return nil }); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				bare, scan, decode = bare+t1.Sub(t0), scan+t2.Sub(t1), decode+t3.Sub(t2)
			}
			b.ReportMetric(float64(bl.Length)*float64(b.N)/bare.Seconds()/1e6, "bare-MB/s")
			b.ReportMetric(100*bare.Seconds()/scan.Seconds(), "scan-%")
			b.ReportMetric(100*bare.Seconds()/decode.Seconds(), "decode-%")
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
			b.SetBytes(s.data.Length())
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
				b.SetBytes(s.data.Length())
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

// BenchmarkDecodeInMemory is BenchmarkDecodeAll without the chunk reader:
// the first partitions of each table (up to 64 MiB, cut at a partition
// boundary) decompressed once into memory, then decoded row by row and
// cell by cell. It isolates the row decoder, whose cost is what separates
// DecodeAll from BareLZ4.
func BenchmarkDecodeInMemory(b *testing.B) {
	for _, p := range benchTables(b) {
		s, err := Open(p, Options{})
		if err != nil {
			b.Fatal(err)
		}
		var end int64
		if err := s.ScanPartitions(ScanOptions{SkipCells: true}, func(ps *PartitionSummary) error {
			if ps.Offset+ps.Size > 64<<20 {
				return io.EOF
			}
			end = ps.Offset + ps.Size
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, end)
		if _, err := s.data.ReadAt(buf, 0); err != nil {
			b.Fatal(err)
		}
		schema := s.schema
		s.Close()
		b.Run(benchName(p), func(b *testing.B) {
			b.SetBytes(end)
			var h rows.PartitionHeader
			for i := 0; i < b.N; i++ {
				d := rows.NewDecoder(rows.NewBytesSource(buf, 0), schema)
				var cells int
				for {
					if err := d.ReadPartitionHeader(&h); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					for {
						u, err := d.Next(false)
						if err != nil {
							b.Fatal(err)
						}
						if u == nil {
							break
						}
						cells += len(u.Cells)
					}
				}
				if cells == 0 {
					b.Fatal("no cells")
				}
			}
		})
	}
}
