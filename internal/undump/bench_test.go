package undump

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/benchbase"
	"github.com/sstabletool/sstabletool/internal/dump"
)

// BenchmarkWriteVsFloor measures `write` against the rewrite floor on the
// same machine, on one core (benchbase.Floors.Rewrite: Data.db mapped,
// every chunk's CRC32 checked, LZ4-decompressed, compressed again and its
// CRC32 taken),
// each round the floor then the write: the table's dump -t (made once,
// untimed) written back --like the table, verified before it is
// committed, as the command does. Besides the shares of the floor
// (benchbase.Report) it reports the input's speed (json-MB/s) and
// the live heap's peak during the write (heap-peak-MB, sampled every
// millisecond) and that peak as a share of the input (heap-peak-%): the
// input is streamed, so the peak stays flat as the input grows.
//
//	sstabletool generate --format nc --partitions 30000 --out /tmp/big
//	SSTABLE_BENCH=/tmp/big/nc-1-big-Data.db go test ./internal/undump \
//	    -run '^$' -bench WriteVsFloor -benchtime 1x -cpu 1
func BenchmarkWriteVsFloor(b *testing.B) {
	for _, p := range benchbase.Tables(b) {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			b.Fatal(err)
		}
		f := benchbase.NewFloor(b, s.Data())
		s.Close()
		if f == nil {
			continue // not LZ4-compressed: no floor
		}
		b.Run(benchbase.Name(p), func(b *testing.B) {
			in := dumpToFile(b, p)
			defer in.R.(*os.File).Close()
			o := likeOptions(b, p)
			b.SetBytes(f.Length)
			floors := benchbase.Floors{f}
			var floor, work benchbase.Times
			var peak uint64
			for i := 0; i < b.N; i++ {
				floor = floor.Add(floors.Rewrite(b, 1))
				dest := b.TempDir()
				runtime.GC()
				stop := samplePeakHeap(&peak)
				work = work.Add(benchbase.Measure(func() {
					if _, err := Write(in, dest, o); err != nil {
						b.Fatal(err)
					}
				}))
				stop()
				os.RemoveAll(dest)
			}
			benchbase.Report(b, f.Length, floor, benchbase.Times{}, work)
			b.ReportMetric(float64(in.Size)*float64(b.N)/1e6/work.Wall.Seconds(), "json-MB/s")
			b.ReportMetric(float64(peak)/1e6, "heap-peak-MB")
			b.ReportMetric(100*float64(peak)/float64(in.Size), "heap-peak-%")
		})
	}
}

// dumpToFile writes dump -t of the sstable at p into a temporary file and
// opens it as write's input.
func dumpToFile(b *testing.B, p string) Input {
	s, err := sstable.Open(p, sstable.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(b.TempDir(), "in.json")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	d := dump.NewDumper(out, s, dump.Options{RawTimestamps: true, Now: pinnedNow})
	d.Begin()
	if err := d.All(nil, nil); err != nil {
		b.Fatal(err)
	}
	if err := d.End(); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	r, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	st, err := r.Stat()
	if err != nil {
		b.Fatal(err)
	}
	return Input{Name: path, R: r, Size: st.Size()}
}

// samplePeakHeap records in *peak the most heap its objects took (live
// and not yet swept) while it runs, sampled every millisecond; stop ends
// it.
func samplePeakHeap(peak *uint64) (stop func()) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			*peak = max(*peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
