package scrub

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/reader"
)

// benchInput is convert's benchmark input: a compressed nc table of about
// SSTABLETOOL_BENCH_MB megabytes of uncompressed Data.db (default 64).
func benchInput(b *testing.B) string {
	b.Helper()
	mb := 64
	if s := os.Getenv("SSTABLETOOL_BENCH_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	return generated(b, "wide-partitions", int64(mb)*17, "nc", generate.Options{})
}

// BenchmarkScrubVersusConvert measures, in one run on the same undamaged
// table, scrub (which keeps Data.db and finds nothing to rebuild), scrub
// of a copy without its derived components (Index.db, Summary.db,
// Filter.db, Digest.crc32 and TOC.txt rebuilt), and convert to oa with
// and without its verification, and reports scrub's time as a ratio of
// convert's (the bar: at most 1.5).
func BenchmarkScrubVersusConvert(b *testing.B) {
	src := benchInput(b)
	stripped := filepath.Join(b.TempDir(), "stripped")
	if err := os.MkdirAll(stripped, 0o755); err != nil {
		b.Fatal(err)
	}
	for name, data := range readAll(b, filepath.Dir(src)) {
		if strings.HasSuffix(name, format.ComponentIndex) || strings.HasSuffix(name, format.ComponentSummary) ||
			strings.HasSuffix(name, format.ComponentFilter) || strings.HasSuffix(name, format.ComponentDigest) || strings.HasSuffix(name, format.ComponentTOC) {
			continue
		}
		if err := os.WriteFile(filepath.Join(stripped, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	strippedSrc := filepath.Join(stripped, filepath.Base(src))
	s, err := sstable.Open(src, sstable.Options{})
	if err != nil {
		b.Fatal(err)
	}
	length := s.Data().Length()
	s.Close()
	b.SetBytes(length)
	o := Options{ColumnIndexSize: writer.DefaultColumnIndexSize, Access: reader.Buffered}
	var tScrub, tRebuild, tConv, tConvV time.Duration
	runs := []func(out string){
		func(out string) {
			t0 := time.Now()
			rep, err := Scrub(src, filepath.Join(out, "scrub"), o)
			if err != nil || rep.Repaired() || rep.Rewritten {
				b.Fatalf("scrub of the undamaged table: %v, repaired %v", err, rep != nil && rep.Repaired())
			}
			tScrub += time.Since(t0)
		},
		func(out string) {
			t0 := time.Now()
			rep, err := Scrub(strippedSrc, filepath.Join(out, "rebuild"), o)
			if err != nil || rep.Rewritten {
				b.Fatal(err)
			}
			tRebuild += time.Since(t0)
		},
		func(out string) {
			t0 := time.Now()
			if _, err := convert.Convert(src, filepath.Join(out, "convert"), convert.Options{To: format.MustVersion("oa"), Access: reader.Buffered}); err != nil {
				b.Fatal(err)
			}
			tConv += time.Since(t0)
		},
		func(out string) {
			t0 := time.Now()
			if _, err := convert.Convert(src, filepath.Join(out, "convert-verify"), convert.Options{To: format.MustVersion("oa"), Access: reader.Buffered, Verify: true}); err != nil {
				b.Fatal(err)
			}
			tConvV += time.Since(t0)
		},
	}
	for i := 0; i < b.N; i++ {
		// Outputs in memory where there is /dev/shm (fsyncs then cost the
		// same nothing for all), in a rotating order so that no run
		// always follows another.
		out := fastTemp(b)
		for k := range runs {
			runs[(k+i)%len(runs)](out)
		}
		os.RemoveAll(out)
	}
	mbps := func(d time.Duration) float64 { return float64(length) * float64(b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(mbps(tScrub), "scrub-MB/s")
	b.ReportMetric(mbps(tRebuild), "scrub-rebuild-MB/s")
	b.ReportMetric(mbps(tConv), "convert-MB/s")
	b.ReportMetric(mbps(tConvV), "convert+verify-MB/s")
	b.ReportMetric(tScrub.Seconds()/tConv.Seconds(), "scrub/convert")
	b.ReportMetric(tRebuild.Seconds()/tConv.Seconds(), "scrub-rebuild/convert")
	b.ReportMetric(tScrub.Seconds()/tConvV.Seconds(), "scrub/convert+verify")
}
