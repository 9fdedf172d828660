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

// loadFloor returns p's floor (benchbase.Floor), or nil for a table that
// is not LZ4-compressed.
func loadFloor(b *testing.B, p string) *benchbase.Floor {
	s, err := Open(p, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	return benchbase.NewFloor(b, s.data)
}

// BenchmarkFloor is the read floor alone on each LZ4 table: Data.db
// mapped, every chunk's CRC32 checked and the chunk decompressed.
func BenchmarkFloor(b *testing.B) {
	for _, p := range benchTables(b) {
		f := loadFloor(b, p)
		if f == nil {
			continue
		}
		b.Run(benchName(p), func(b *testing.B) {
			b.SetBytes(f.Length)
			buf := f.NewBuffers()
			for i := 0; i < b.N; i++ {
				f.Read(b, buf)
			}
		})
	}
}

// BenchmarkVsFloor reports the scans' shares of the read floor directly:
// each round runs the floor, the partition-level scan (rows stepped over
// by their sizes) and the full cell decode (mmap, chunk CRCs checked) back
// to back on the same table, so that all three see the same machine;
// scan-% and decode-% are the floor's time over theirs (cpu-% the same in
// CPU time). On a shared machine this is steadier than dividing separate
// benchmarks.
//
//	SSTABLE_BENCH=/tmp/big/nc-1-big-Data.db go test ./format/sstable \
//	    -run '^$' -bench VsFloor -benchtime 5x -cpu 1
func BenchmarkVsFloor(b *testing.B) {
	for _, p := range benchTables(b) {
		f := loadFloor(b, p)
		if f == nil {
			continue
		}
		b.Run(benchName(p), func(b *testing.B) {
			s, err := Open(p, Options{Access: reader.Mmap})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.SetBytes(3 * f.Length)
			buf := f.NewBuffers()
			var floor, scan, decode benchbase.Times
			for i := 0; i < b.N; i++ {
				floor = floor.Add(f.Read(b, buf))
				scan = scan.Add(benchbase.Measure(func() {
					if err := s.ScanPartitions(ScanOptions{SkipCells: true}, func(*PartitionSummary) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}))
				decode = decode.Add(benchbase.Measure(func() {
					if err := s.ScanPartitions(ScanOptions{}, func(*PartitionSummary) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(float64(f.Length)*float64(b.N)/floor.Wall.Seconds()/1e6, "floor-MB/s")
			b.ReportMetric(benchbase.Share(floor.Wall, scan.Wall), "scan-%")
			b.ReportMetric(benchbase.Share(floor.Wall, decode.Wall), "decode-%")
			b.ReportMetric(benchbase.Share(floor.CPU, scan.CPU), "scan-cpu-%")
			b.ReportMetric(benchbase.Share(floor.CPU, decode.CPU), "decode-cpu-%")
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
// Index.db and decodes each partition's header, as `dump -k` does. Its
// floor is what one lookup cannot avoid: one chunk of the mapped Data.db
// CRC-checked and decompressed (benchbase.Floor.ChunkAt), at random,
// measured in the same run in alternating batches; share-% is lookups/s
// over floor-lookups/s.
func BenchmarkLookup(b *testing.B) {
	for _, p := range benchTables(b) {
		f := loadFloor(b, p)
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
				var m []byte
				var buf *benchbase.Buffers
				if f != nil {
					var unmap func()
					m, unmap = f.Map(b)
					defer unmap()
					buf = f.NewBuffers()
				}
				rng := rand.New(rand.NewSource(1))
				frng := rand.New(rand.NewSource(2))
				var h rows.PartitionHeader
				var work, floor time.Duration
				const batch = 256
				b.ResetTimer()
				for i := 0; i < b.N; i += batch {
					n := min(batch, b.N-i)
					t0 := time.Now()
					for j := 0; j < n; j++ {
						k := keys[rng.Intn(len(keys))]
						e, ok, err := s.Find(k)
						if err != nil || !ok {
							b.Fatalf("key %x: ok=%v err=%v", k, ok, err)
						}
						if _, err := s.PartitionAt(e.Position, &h); err != nil {
							b.Fatal(err)
						}
					}
					t1 := time.Now()
					work += t1.Sub(t0)
					if f != nil {
						for j := 0; j < n; j++ {
							f.ChunkAt(b, m, frng.Intn(f.Chunks), buf)
						}
						floor += time.Since(t1)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/work.Seconds(), "lookups/s")
				if f != nil {
					b.ReportMetric(float64(b.N)/floor.Seconds(), "floor-lookups/s")
					b.ReportMetric(benchbase.Share(floor, work), "share-%")
				}
			})
		}
	}
}

// BenchmarkDecodeInMemory is BenchmarkDecodeAll without the chunk reader:
// the first partitions of each table (up to 64 MiB, cut at a partition
// boundary) decompressed once into memory, then decoded row by row and
// cell by cell. It isolates the row decoder, whose cost is what separates
// DecodeAll from Floor.
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
