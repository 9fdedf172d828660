package convert

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

// benchInput generates a compressed nc sstable of about
// SSTABLETOOL_BENCH_MB megabytes of uncompressed Data.db (default 64; the
// 1 GiB figures in docs/convert.md used 1024).
func benchInput(b *testing.B) string {
	b.Helper()
	mb := 64
	if s := os.Getenv("SSTABLETOOL_BENCH_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	p, _ := workload.Builtin("wide-partitions")
	p.Partitions = int64(mb) * 17 // ~60 KB per partition of this profile
	res, err := generate.Generate(p, filepath.Join(b.TempDir(), "src"), generate.Options{Version: format.MustVersion("nc")})
	if err != nil {
		b.Fatal(err)
	}
	return res.DataPath
}

// recompress is the baseline: decompress every chunk of Data.db and
// compress it again with the same compressor, in memory, one core.
func recompress(b *testing.B, path string) int64 {
	s, err := sstable.Open(path, sstable.Options{Access: reader.Buffered})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	info := s.Data().Info()
	codec, err := reader.CompressorFor(info.Compressor, info.Options)
	if err != nil {
		b.Fatal(err)
	}
	f := s.Data().File()
	var raw, plain, out []byte
	var total int64
	for i, off := range info.ChunkOffsets {
		end := f.Size()
		if i+1 < len(info.ChunkOffsets) {
			end = info.ChunkOffsets[i+1]
		}
		n := int(end - off - 4)
		if cap(raw) < n {
			raw = make([]byte, n)
		}
		raw = raw[:n]
		if _, err := f.ReadAt(raw, off); err != nil {
			b.Fatal(err)
		}
		if plain, err = codec.Decompress(plain[:0], raw); err != nil {
			b.Fatal(err)
		}
		if out, err = codec.Compress(out[:0], plain); err != nil {
			b.Fatal(err)
		}
		total += int64(len(plain))
	}
	return total
}

// BenchmarkThroughput measures, in one run on the same input, the MB/s of
// uncompressed source Data.db for: decompress+recompress of the chunks
// (baseline), convert without and with verification, and savings; it
// reports each as a ratio of the baseline and savings' speed-up over
// convert.
func BenchmarkThroughput(b *testing.B) {
	src := benchInput(b)
	s, _ := sstable.Open(src, sstable.Options{})
	length := s.Data().Length()
	s.Close()
	b.SetBytes(length)
	var tBase, tConv, tConvV, tSav time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if recompress(b, src) != length {
			b.Fatal("baseline read a different length")
		}
		tBase += time.Since(t0)

		out := b.TempDir()
		t0 = time.Now()
		if _, err := Convert(src, filepath.Join(out, "a"), Options{To: format.MustVersion("oa"), Access: reader.Buffered}); err != nil {
			b.Fatal(err)
		}
		tConv += time.Since(t0)

		t0 = time.Now()
		if _, err := Convert(src, filepath.Join(out, "b"), Options{To: format.MustVersion("oa"), Access: reader.Buffered, Verify: true}); err != nil {
			b.Fatal(err)
		}
		tConvV += time.Since(t0)
		os.RemoveAll(out)

		t0 = time.Now()
		if _, err := Estimate(src, Options{To: format.MustVersion("oa"), Access: reader.Buffered}); err != nil {
			b.Fatal(err)
		}
		tSav += time.Since(t0)
	}
	mbps := func(d time.Duration) float64 { return float64(length) * float64(b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(mbps(tBase), "baseline-MB/s")
	b.ReportMetric(mbps(tConv), "convert-MB/s")
	b.ReportMetric(mbps(tConvV), "convert+verify-MB/s")
	b.ReportMetric(mbps(tSav), "savings-MB/s")
	b.ReportMetric(tBase.Seconds()/tConv.Seconds(), "convert/baseline")
	b.ReportMetric(tBase.Seconds()/tConvV.Seconds(), "convert+verify/baseline")
	b.ReportMetric(tConvV.Seconds()/tSav.Seconds(), "savings-speedup-vs-convert")
}
