package dump

import (
	"io"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/benchbase"
	"github.com/sstabletool/sstabletool/reader"
)

// countingDiscard is io.Discard that counts what it is given.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkDumpVsFloor measures `dump` against the read floor on the same
// machine (benchbase.Floor: Data.db mapped, every chunk's CRC32 checked
// and the chunk LZ4-decompressed): each round runs the floor, the pretty
// dump, the --jsonl dump and the -d dump of the whole table to a
// discarding writer (mmap, chunk CRCs checked), back to back. It reports
// the floor's speed, the pretty and -d dumps' speeds in MB/s of
// uncompressed sstable, the three dumps' speeds as percentages of the
// floor's (dump-%, jsonl-%, debug-%; dump-best-% for the shortest rounds),
// and the JSON bytes per second the pretty dump produced. With -cpu 1 the
// dump renders on one core; with -cpu 2 on two (All). dump-cpu-% compares
// CPU time instead of wall time, which the other tenants of a shared
// machine disturb less.
//
//	SSTABLE_BENCH=/tmp/big/nc-1-big-Data.db go test ./internal/dump \
//	    -run '^$' -bench DumpVsFloor -benchtime 3x -cpu 1
//
// and again with -cpu 2, one -cpu value a run: with several, a
// sub-benchmark's first round can run before GOMAXPROCS is set (the procs
// metric of cmd/sstabletool's BenchmarkVsFloor shows it with -benchtime 1x).
func BenchmarkDumpVsFloor(b *testing.B) { benchVsFloor(b, benchDump) }

// BenchmarkReferenceDumpVsFloor is the same with the reference dumper
// (reference_test.go, the implementation before issue #11): the
// speedup's "before", measured beside the same floor.
func BenchmarkReferenceDumpVsFloor(b *testing.B) { benchVsFloor(b, benchRefDump) }

func benchVsFloor(b *testing.B, dump func(io.Writer, *sstable.SSTable, Options) error) {
	for _, p := range benchbase.Tables(b) {
		s, err := sstable.Open(p, sstable.Options{Access: reader.Mmap})
		if err != nil {
			b.Fatal(err)
		}
		f := benchbase.NewFloor(b, s.Data())
		if f == nil {
			s.Close()
			continue
		}
		b.Run(benchbase.Name(p), func(b *testing.B) {
			b.SetBytes(3 * f.Length)
			buf := f.NewBuffers()
			var floor, pretty, lines, debug benchbase.Times
			var out int64
			for i := 0; i < b.N; i++ {
				floor = floor.Add(f.Read(b, buf))
				pretty = pretty.Add(benchbase.Measure(func() {
					w := &countingDiscard{}
					if err := dump(w, s, Options{}); err != nil {
						b.Fatal(err)
					}
					out += w.n
				}))
				lines = lines.Add(benchbase.Measure(func() {
					if err := dump(io.Discard, s, Options{JSONLines: true}); err != nil {
						b.Fatal(err)
					}
				}))
				debug = debug.Add(benchbase.Measure(func() {
					if err := dump(io.Discard, s, Options{Debug: true}); err != nil {
						b.Fatal(err)
					}
				}))
			}
			mb := float64(f.Length) * float64(b.N) / 1e6
			b.ReportMetric(mb/floor.Wall.Seconds(), "floor-MB/s")
			b.ReportMetric(mb/pretty.Wall.Seconds(), "dump-MB/s")
			b.ReportMetric(benchbase.Share(floor.Wall, pretty.Wall), "dump-%")
			b.ReportMetric(benchbase.Share(floor.BestWall, pretty.BestWall), "dump-best-%")
			b.ReportMetric(benchbase.Share(floor.Wall, lines.Wall), "jsonl-%")
			b.ReportMetric(mb/debug.Wall.Seconds(), "debug-MB/s")
			b.ReportMetric(benchbase.Share(floor.Wall, debug.Wall), "debug-%")
			b.ReportMetric(float64(out)/1e6/pretty.Wall.Seconds(), "json-MB/s")
			if pretty.CPU > 0 {
				// CPU seconds of the dump (all its threads) per CPU second
				// of the floor: steadier than wall time on a busy machine,
				// and with -cpu 2 the cost of the parallel dump.
				b.ReportMetric(benchbase.Share(floor.CPU, pretty.CPU), "dump-cpu-%")
			}
		})
		s.Close()
	}
}

// benchDump dumps every partition of s the way the dump command does: on
// GOMAXPROCS workers, so -cpu 1 measures one core and -cpu 2 the pipeline.
func benchDump(w io.Writer, s *sstable.SSTable, o Options) error {
	d := NewDumper(w, s, o)
	d.Begin()
	if err := d.All(nil, nil); err != nil {
		return err
	}
	return d.End()
}

// benchRefDump dumps with the reference dumper, as the command did.
func benchRefDump(w io.Writer, s *sstable.SSTable, o Options) error {
	d := newRefDumper(w, s, o)
	d.Begin()
	if err := s.EachPartition(d.Partition); err != nil {
		return err
	}
	return d.End()
}
