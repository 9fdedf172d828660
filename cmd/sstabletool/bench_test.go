package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/benchbase"
)

// BenchmarkVsFloor is the table of docs/performance.md: each command run
// whole, in this process, on the same table as its floor measured in the
// same round (benchbase.Floor: map Data.db, CRC32 and LZ4-decompress every
// chunk; for convert, also recompress every chunk and take its CRC32),
// once on one core and once with the chunks split across every core
// (GOMAXPROCS). Each sub-benchmark reports the command's share of both
// floors (share-%: the one-core floor's time / the command's over all
// rounds, so 100% is the floor's speed; all-share-% the same against the
// floor on every core; cpu-share-% against the one-core floor in CPU
// time) and the speeds (benchbase.Report).
//
// The table is a generated one of benchbase.GeneratedPartitions
// partitions unless SSTABLE_BENCH names a Data.db; the figures of
// docs/performance.md:
//
//	sstabletool generate --format nc --partitions 300000 --out /tmp/big
//	SSTABLE_BENCH=/tmp/big/nc-1-big-Data.db GOMAXPROCS=1 go test ./cmd/sstabletool \
//	    -run '^$' -bench VsFloor -benchtime 1x -count 3 -cpu 1
//	SSTABLE_BENCH=/tmp/big/nc-1-big-Data.db go test ./cmd/sstabletool \
//	    -run '^$' -bench VsFloor -benchtime 1x -count 3 -cpu 2
//
// (one -cpu value a run: procs reports the cores each round had).
func BenchmarkVsFloor(b *testing.B) {
	p := benchbase.Table(b)
	s, err := sstable.Open(p, sstable.Options{})
	if err != nil {
		b.Fatal(err)
	}
	floor := benchbase.NewFloor(b, s.Data())
	s.Close()
	if floor == nil {
		b.Skipf("%s is not LZ4-compressed: no floor", p)
	}
	floors := benchbase.Floors{floor}
	// Converted tables go beside the source (the same file system, as an
	// operator's would), each round's removed before the next.
	outDir, err := os.MkdirTemp(filepath.Dir(filepath.Dir(p)), "bench-convert-")
	if err != nil {
		outDir = b.TempDir()
	} else {
		defer os.RemoveAll(outDir)
	}
	works := []struct {
		name    string
		rewrite bool // measured against the rewrite floor
		args    []string
	}{
		{"partitions-sizes-only", false, []string{"partitions", "--sizes-only", p}},
		{"partitions", false, []string{"partitions", p}},
		{"verify", false, []string{"verify", p}},
		{"dump", false, []string{"dump", p}},
		{"convert-verify", true, []string{"convert", "--to", "oa", "--out", filepath.Join(outDir, "oa"), p}},
		{"convert", true, []string{"convert", "--to", "oa", "--verify=false", "--out", filepath.Join(outDir, "oa"), p}},
	}
	saved := stdout
	defer func() { stdout = saved }()
	stdout = &discard{}
	for _, w := range works {
		b.Run(w.name, func(b *testing.B) {
			b.SetBytes(floor.Length)
			var tOne, tAll, tWork benchbase.Times
			for i := 0; i < b.N; i++ {
				if w.rewrite {
					tOne = tOne.Add(floors.Rewrite(b, 1))
					tAll = tAll.Add(floors.Rewrite(b, 0))
				} else {
					tOne = tOne.Add(floors.Read(b, 1))
					tAll = tAll.Add(floors.Read(b, 0))
				}
				tWork = tWork.Add(benchbase.Measure(func() {
					if code := run(append([]string{"sstabletool"}, w.args...)); code != exitOK {
						b.Fatalf("sstabletool %v: exit %d", w.args, code)
					}
				}))
				os.RemoveAll(filepath.Join(outDir, "oa"))
			}
			benchbase.Report(b, floor.Length, tOne, tAll, tWork)
			// The cores the commands had: with several -cpu values, the
			// testing package runs the first round of a sub-benchmark
			// before it sets GOMAXPROCS to the first of them.
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
		})
	}
}
