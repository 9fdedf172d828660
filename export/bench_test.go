package export

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/benchbase"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

// benchTable is the sstable the benchmark exports: $SSTABLE_EXPORT_BENCH,
// or the demo profile generated with benchPartitions partitions (about
// 16 MB of Data.db).
func benchTable(b *testing.B) string {
	if p := os.Getenv("SSTABLE_EXPORT_BENCH"); p != "" {
		return p
	}
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		b.Fatal(err)
	}
	p.Partitions = 4000
	res, err := generate.Generate(p, filepath.Join(b.TempDir(), "ks", "demo-0123456789abcdef0123456789abcdef"), generate.Options{Version: oa.Version})
	if err != nil {
		b.Fatal(err)
	}
	return res.DataPath
}

// BenchmarkExportVsDump exports the partitions and cells of one table
// and dumps it (sstabledump JSON, on every core, to io.Discard), back to
// back in each round, and reports the export's time as a multiple of the
// dump's (export-x-dump; the issue asks for at most 3), both on wall time
// and on CPU time (steadier on a shared machine), and the export's speed
// in MB/s of uncompressed Data.db.
//
// The default table is small; a 0.4 GB one is made with
//
//	sstabletool generate --out /tmp/big/ks/demo-0123456789abcdef0123456789abcdef --partitions 110000
//	SSTABLE_EXPORT_BENCH=/tmp/big/ks/demo-0123456789abcdef0123456789abcdef/oa-1-big-Data.db \
//	    go test ./export -run '^$' -bench ExportVsDump -benchtime 3x
func BenchmarkExportVsDump(b *testing.B) {
	path := benchTable(b)
	out := b.TempDir()
	s, err := sstable.Open(path, sstable.Options{Access: reader.Buffered})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.SetBytes(s.Data().Length())
	var dumpWall, exportWall, dumpCPU, exportCPU time.Duration
	for i := 0; i < b.N; i++ {
		t0, c0 := time.Now(), benchbase.CPUTime()
		d := dump.NewDumper(io.Discard, s, dump.Options{})
		d.Begin()
		if err := d.All(nil, nil); err != nil {
			b.Fatal(err)
		}
		if err := d.End(); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), benchbase.CPUTime()
		e, err := New(out, Options{Node: "bench", Datasets: Partitions | Cells})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.SSTable(s, Names{Keyspace: "ks", Table: "demo"}); err != nil {
			b.Fatal(err)
		}
		t2, c2 := time.Now(), benchbase.CPUTime()
		dumpWall, exportWall = dumpWall+t1.Sub(t0), exportWall+t2.Sub(t1)
		dumpCPU, exportCPU = dumpCPU+c1-c0, exportCPU+c2-c1
	}
	b.ReportMetric(exportWall.Seconds()/dumpWall.Seconds(), "export-x-dump")
	if dumpCPU > 0 {
		b.ReportMetric(exportCPU.Seconds()/dumpCPU.Seconds(), "export-cpu-x-dump")
	}
	b.ReportMetric(float64(s.Data().Length())*float64(b.N)/1e6/exportWall.Seconds(), "export-MB/s")
}

// BenchmarkExport is the export alone, for profiles.
func BenchmarkExport(b *testing.B) {
	path := benchTable(b)
	out := b.TempDir()
	s, err := sstable.Open(path, sstable.Options{Access: reader.Buffered})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.SetBytes(s.Data().Length())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, err := New(out, Options{Node: "bench", Datasets: Partitions | Cells})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.SSTable(s, Names{Keyspace: "ks", Table: "demo"}); err != nil {
			b.Fatal(err)
		}
	}
}
