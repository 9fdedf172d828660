package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/benchbase"
)

// BenchmarkNode is the node-scale benchmark of docs/performance.md: a
// whole data directory (benchbase.Node: 20 tables, 74 nc, nb and me
// sstables of 1 to 500 MB, about 2.2 GB of Data.db, generated once under
// $SSTABLE_BENCH_NODE; skipped without it) upgraded, converted and
// verified by the commands, run whole in this process, each round beside
// its floor measured in the same round: every chunk of every sstable
// CRC-checked and decompressed (verify's floor), and compressed again and
// its CRC32 taken (the rewrites'), once on one core and once split across
// every core (benchbase.Floors). The shares are as BenchmarkVsFloor's
// (share-% against the one-core floor, all-share-% against the floor on
// every core); verify-r also reports its share of the rewrite floor on
// every core (rewrite-all-share-%). peak-RSS-MB is the most the process's
// resident set grew to during a command (benchbase.PeakRSS, reset before
// each; base-RSS-MB is what it held before), over the rounds.
//
// upgrade rewrites a copy of the node made of hard links (the sources are
// only unlinked); convert -r writes beside it, removed after each round:
//
//	SSTABLE_BENCH_NODE=/var/tmp/sstabletool-node go test ./cmd/sstabletool \
//	    -run '^$' -bench Node -benchtime 1x -count 3 -timeout 2h
func BenchmarkNode(b *testing.B) {
	node := benchbase.Node(b)
	floors := nodeFloors(b, node)
	work, err := os.MkdirTemp(filepath.Dir(node), "work-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(work)
	upgraded := filepath.Join(work, "upgrade")
	converted := filepath.Join(work, "convert")
	type round struct {
		name    string
		rewrite bool     // measured against the rewrite floor
		copy    bool     // runs on a fresh copy of the node (upgraded)
		args    []string // the node is appended
	}
	rounds := []round{
		{"upgrade", true, true, []string{"upgrade"}},
		{"upgrade-verify=false", true, true, []string{"upgrade", "--verify=false"}},
		{"upgrade-jobs=1", true, true, []string{"upgrade", "--jobs", "1"}},
		{"convert-r", true, false, []string{"convert", "-r", "--to", "oa", "--out", converted}},
		{"verify-r", false, false, []string{"verify", "-r"}},
	}
	saved := stdout
	defer func() { stdout = saved }()
	stdout = &discard{}
	for _, r := range rounds {
		b.Run(r.name, func(b *testing.B) {
			b.SetBytes(floors.Length())
			var one, all, rewriteAll, t benchbase.Times
			var peak, base int64
			for i := 0; i < b.N; i++ {
				if r.rewrite {
					one = one.Add(floors.Rewrite(b, 1))
					all = all.Add(floors.Rewrite(b, 0))
				} else {
					one = one.Add(floors.Read(b, 1))
					all = all.Add(floors.Read(b, 0))
					rewriteAll = rewriteAll.Add(floors.Rewrite(b, 0))
				}
				target := node
				if r.copy {
					benchbase.LinkCopy(b, node, upgraded)
					target = upgraded
				}
				args := append(append([]string{"sstabletool"}, r.args...), target)
				benchbase.ResetPeakRSS()
				base = max(base, benchbase.RSS())
				t = t.Add(benchbase.Measure(func() {
					if code := run(args); code != exitOK {
						b.Fatalf("%v: exit %d", args, code)
					}
				}))
				peak = max(peak, benchbase.PeakRSS())
				os.RemoveAll(upgraded)
				os.RemoveAll(converted)
			}
			benchbase.Report(b, floors.Length(), one, all, t)
			if rewriteAll.Wall > 0 {
				b.ReportMetric(benchbase.Share(rewriteAll.Wall, t.Wall), "rewrite-all-share-%")
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
			b.ReportMetric(float64(base)/(1<<20), "base-RSS-MB")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
		})
	}
}

// nodeFloors is the floor of every Data.db under dir.
func nodeFloors(b *testing.B, dir string) benchbase.Floors {
	var fs benchbase.Floors
	for _, p := range benchbase.DataFiles(b, dir) {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			b.Fatal(err)
		}
		f := benchbase.NewFloor(b, s.Data())
		s.Close()
		if f == nil {
			b.Fatalf("%s is not LZ4-compressed: no floor", p)
		}
		fs = append(fs, f)
	}
	return fs
}
