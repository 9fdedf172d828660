package merge_test

import (
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/workload"
)

// BenchmarkDumpMergeVsSeparate: dump --merge of a four-sstable history
// against dumping the four sstables one by one, on one core, in the same
// run (the floor); x-separate is the ratio (the issue asks for at most
// 3).
func BenchmarkDumpMergeVsSeparate(b *testing.B) {
	paths, now := history(b, generate.HistoryProfile, 4, 1, 3000)
	opts := dump.Options{JSONLines: true, Workers: 1, Now: func() time.Time { return time.Unix(now, 0) }}
	var ssts []*sstable.SSTable
	var bytes int64
	for _, p := range paths {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		ssts = append(ssts, s)
		bytes += s.Data().Length()
	}
	tbl, err := merge.New(ssts)
	if err != nil {
		b.Fatal(err)
	}
	separate := func() {
		for _, s := range ssts {
			d := dump.NewDumper(io.Discard, s, opts)
			d.Begin()
			if err := d.All(nil, nil); err != nil {
				b.Fatal(err)
			}
			d.End()
		}
	}
	merged := func() {
		d := dump.NewTableDumper(io.Discard, tbl, opts)
		d.Begin()
		sc, err := tbl.Scan(merge.Options{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds})
		if err != nil {
			b.Fatal(err)
		}
		for {
			p, err := sc.Next()
			if err != nil {
				b.Fatal(err)
			}
			if p == nil {
				break
			}
			if err := d.PartitionFrom(&p.Header, partRows{p}); err != nil {
				b.Fatal(err)
			}
		}
		d.End()
	}
	separate()
	merged()
	b.SetBytes(bytes)
	b.ResetTimer()
	var tSep, tMerge time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		separate()
		t1 := time.Now()
		merged()
		tSep += t1.Sub(t0)
		tMerge += time.Since(t1)
	}
	b.ReportMetric(float64(tMerge)/float64(tSep), "x-separate")
	b.ReportMetric(float64(bytes)/1e6/(tMerge.Seconds()/float64(b.N)), "merge-MB/s")
}

// BenchmarkMergeMemory merges histories of growing size (the same
// partitions, more of them) and reports the peak heap during each scan:
// it stays at what a partition's versions need, whatever the table's
// size. table/widest is how many times the table's bytes its largest
// partition version is.
func BenchmarkMergeMemory(b *testing.B) {
	p, err := workload.ParseProfile([]byte(generate.HistoryProfile), "bench")
	if err != nil {
		b.Fatal(err)
	}
	p.RowsPerPartition = "uniform(1,400)"
	for _, n := range []int64{1000, 4000} {
		b.Run("partitions="+strconv.FormatInt(n, 10), func(b *testing.B) {
			prof := *p
			prof.Partitions = n
			paths, now := historyOf(b, &prof, 4)
			tbl, err := merge.Open(paths, sstable.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Close()
			widest := int64(0)
			for _, s := range tbl.SSTables() {
				s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(ps *sstable.PartitionSummary) error {
					widest = max(widest, ps.Size)
					return nil
				})
			}
			var peak uint64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapInuse
				sc, err := tbl.Scan(merge.Options{Now: now})
				if err != nil {
					b.Fatal(err)
				}
				k := 0
				for {
					part, err := sc.Next()
					if err != nil {
						b.Fatal(err)
					}
					if part == nil {
						break
					}
					var u *rows.Unfiltered
					for u, err = part.Next(); u != nil && err == nil; u, err = part.Next() {
					}
					if k++; k%256 == 0 {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapInuse-min(ms.HeapInuse, base))
					}
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(tbl.DataLength())/(1<<20), "table-MiB")
			b.ReportMetric(float64(tbl.DataLength())/float64(widest), "table/widest")
		})
	}
}
