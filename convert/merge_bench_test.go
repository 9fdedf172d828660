package convert

import (
	"os"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/merge"
)

// BenchmarkMergeWrite: convert --merge (no verification) and savings
// --compaction (EstimateMerge) of a four-sstable history, each against
// the floor measured in the same run: the merge alone (every partition
// scanned and every unfiltered merged, nothing written). x-merge is each
// one's time over the floor's.
func BenchmarkMergeWrite(b *testing.B) {
	tbl, now := historyTableOf(b, generate.HistoryProfile, version(b, "oa"), 4, 1, 3000)
	o := MergeOptions{To: version(b, "oa"), Merge: merge.Options{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds}}
	floor := func() {
		sc, err := tbl.Scan(o.Merge)
		if err != nil {
			b.Fatal(err)
		}
		for {
			p, err := sc.Next()
			if err != nil {
				b.Fatal(err)
			}
			if p == nil {
				return
			}
			for {
				u, err := p.Next()
				if err != nil {
					b.Fatal(err)
				}
				if u == nil {
					break
				}
			}
		}
	}
	out := b.TempDir()
	write := func() {
		dir, err := os.MkdirTemp(out, "w")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Merge(tbl, dir, o); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
	}
	estimate := func() {
		if _, err := EstimateMerge(tbl, o); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(tbl.DataLength())
	var tFloor, tWrite, tEst time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		floor()
		t1 := time.Now()
		write()
		t2 := time.Now()
		estimate()
		t3 := time.Now()
		tFloor, tWrite, tEst = tFloor+t1.Sub(t0), tWrite+t2.Sub(t1), tEst+t3.Sub(t2)
	}
	b.ReportMetric(float64(tWrite)/float64(tFloor), "x-merge-write")
	b.ReportMetric(float64(tEst)/float64(tFloor), "x-merge-estimate")
}
