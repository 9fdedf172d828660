package dump

import (
	"io"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/benchbase"
	"github.com/sstabletool/sstabletool/reader"
)

// countingDiscard is io.Discard that counts what it is given.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkDumpVsBareLZ4 measures `dump` against the bare-LZ4 baseline on
// the same machine: each round runs the bare decompression of every chunk
// (benchbase.Bare), the pretty dump, the --jsonl dump and the -d dump of
// the whole table to a discarding writer (mmap, chunk CRCs checked), back
// to back. It reports the baseline's speed, the pretty and -d dumps'
// speeds in MB/s of uncompressed sstable, the three dumps' speeds as
// percentages of the baseline's, and the JSON bytes per second the
// pretty dump produced.
// With -cpu 1 the dump renders on one core; with -cpu 2 on two (All).
// dump-cpu-% compares CPU time instead of wall time, which the other
// tenants of a shared machine disturb less.
//
//	SSTABLE_BENCH=/tmp/dumpbench/demo/nc-1-big-Data.db go test ./internal/dump \
//	    -run '^$' -bench DumpVsBareLZ4 -benchtime 3x -cpu 1,2
func BenchmarkDumpVsBareLZ4(b *testing.B) { benchVsBare(b, benchDump) }

// BenchmarkReferenceDumpVsBareLZ4 is the same with the reference dumper
// (reference_test.go, the implementation before issue #11): the
// speedup's "before", measured beside the same baseline.
func BenchmarkReferenceDumpVsBareLZ4(b *testing.B) { benchVsBare(b, benchRefDump) }

func benchVsBare(b *testing.B, dump func(io.Writer, *sstable.SSTable, Options) error) {
	for _, p := range benchbase.Tables(b) {
		s, err := sstable.Open(p, sstable.Options{Access: reader.Mmap})
		if err != nil {
			b.Fatal(err)
		}
		bl := benchbase.Load(b, s.Data())
		if bl == nil {
			s.Close()
			continue
		}
		b.Run(benchbase.Name(p), func(b *testing.B) {
			b.SetBytes(3 * bl.Length)
			dst := bl.Buffer()
			var bare, pretty, lines, debug, bareCPU, prettyCPU time.Duration
			var out int64
			for i := 0; i < b.N; i++ {
				t0, c0 := time.Now(), benchbase.CPUTime()
				dst = bl.Pass(b, dst)
				t1, c1 := time.Now(), benchbase.CPUTime()
				w := &countingDiscard{}
				if err := dump(w, s, Options{}); err != nil {
					b.Fatal(err)
				}
				out += w.n
				t2, c2 := time.Now(), benchbase.CPUTime()
				if err := dump(io.Discard, s, Options{JSONLines: true}); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				if err := dump(io.Discard, s, Options{Debug: true}); err != nil {
					b.Fatal(err)
				}
				t4 := time.Now()
				bare, pretty, lines, debug = bare+t1.Sub(t0), pretty+t2.Sub(t1), lines+t3.Sub(t2), debug+t4.Sub(t3)
				bareCPU, prettyCPU = bareCPU+c1-c0, prettyCPU+c2-c1
			}
			mb := float64(bl.Length) * float64(b.N) / 1e6
			b.ReportMetric(mb/bare.Seconds(), "bare-MB/s")
			b.ReportMetric(mb/pretty.Seconds(), "dump-MB/s")
			b.ReportMetric(100*bare.Seconds()/pretty.Seconds(), "dump-%")
			b.ReportMetric(100*bare.Seconds()/lines.Seconds(), "jsonl-%")
			b.ReportMetric(mb/debug.Seconds(), "debug-MB/s")
			b.ReportMetric(100*bare.Seconds()/debug.Seconds(), "debug-%")
			b.ReportMetric(float64(out)/1e6/pretty.Seconds(), "json-MB/s")
			if prettyCPU > 0 {
				// CPU seconds of the dump (all its threads) per CPU second
				// of the bare pass: steadier than wall time on a busy
				// machine, and with -cpu 2 the cost of the parallel dump.
				b.ReportMetric(100*bareCPU.Seconds()/prettyCPU.Seconds(), "dump-cpu-%")
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
