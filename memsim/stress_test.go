package memsim

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/workload"
)

var stressExamples = []string{
	"cqlstress-example.yaml", "cqlstress-counter-example.yaml", "cqlstress-insanity-example.yaml",
	"cqlstress-lwt-example.yaml", "stress-example.yaml", "stress-lwt-example.yaml",
}

func stressExample(t testing.TB, name string) *workload.Profile {
	t.Helper()
	p, err := workload.LoadProfile(filepath.Join("..", "workload", "testdata", "stress", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Every example cassandra-stress profile of Cassandra's repository replays
// 20,000 ops into every memtable: the partitions are the distinct keys of
// the op stream, and the counter table holds one counter cell per
// partition however often it was incremented.
func TestStressProfilesReplay(t *testing.T) {
	for _, name := range stressExamples {
		p := stressExample(t, name)
		keys := map[string]bool{}
		g, err := workload.NewGenerator(p, 20000)
		if err != nil {
			t.Fatal(err)
		}
		var op workload.Op
		for {
			ok, err := g.Next(&op)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			keys[string(op.Key)] = true
		}
		rs, err := Replay(GeneratorSource(p, 20000), Options{Shards: 2})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rs) != len(Kinds)*len(AllocTypes) {
			t.Fatalf("%s: %d results", name, len(rs))
		}
		for _, r := range rs {
			if r.Ops != 20000 || r.Partitions != int64(len(keys)) || r.OnHeap <= r.LiveData && r.OffHeap == 0 {
				t.Errorf("%s %s %s: %d ops, %d partitions (want 20000, %d), on heap %d, live %d", name, r.Memtable, r.Allocation, r.Ops, r.Partitions, len(keys), r.OnHeap, r.LiveData)
			}
			if name == "cqlstress-counter-example.yaml" && r.Cells != r.Partitions {
				t.Errorf("%s: %d cells in %d partitions of one counter each", r.Memtable, r.Cells, r.Partitions)
			}
		}
	}
}

// BenchmarkStressProfileReplay times memsim's replay of each example
// cassandra-stress profile against the built-in small-partitions profile
// on the same number of ops, in the same run, and reports the ratio of
// their times (x-vs-small-partitions: above 1 is slower) and of their
// times per cell written (x-per-cell: stress profiles write wider rows).
// MEMSIM_BENCH_OPS sets the ops (default 50,000).
//
//	go test -run '^$' -bench StressProfileReplay -benchtime 3x ./memsim
func BenchmarkStressProfileReplay(b *testing.B) {
	ops := int64(50_000)
	if s := os.Getenv("MEMSIM_BENCH_OPS"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v <= 0 {
			b.Fatalf("MEMSIM_BENCH_OPS=%q", s)
		}
		ops = v
	}
	builtin, _ := workload.Builtin("small-partitions")
	builtin.Partitions = ops
	run := func(p *workload.Profile) time.Duration {
		start := time.Now()
		if _, err := Replay(GeneratorSource(p, ops), Options{Shards: 2}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	cb := cellsWritten(b, builtin, ops)
	for _, name := range stressExamples {
		p := stressExample(b, name)
		cs := cellsWritten(b, p, ops)
		b.Run(name, func(b *testing.B) {
			var ts, tb time.Duration
			for i := 0; i < b.N; i++ {
				ts += run(p)
				tb += run(builtin)
			}
			b.ReportMetric(float64(ts.Nanoseconds())/float64(int64(b.N)*ops), "ns/op-stress")
			b.ReportMetric(float64(tb.Nanoseconds())/float64(int64(b.N)*ops), "ns/op-small-partitions")
			b.ReportMetric(float64(ts)/float64(tb), "x-vs-small-partitions")
			b.ReportMetric(float64(ts)/float64(cs)/(float64(tb)/float64(cb)), "x-per-cell")
		})
	}
}

// cellsWritten counts the cells of the first ops ops of a profile.
func cellsWritten(b *testing.B, p *workload.Profile, ops int64) int64 {
	g, err := workload.NewGenerator(p, ops)
	if err != nil {
		b.Fatal(err)
	}
	var op workload.Op
	var n int64
	for {
		ok, err := g.Next(&op)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			return n
		}
		n += int64(len(op.Cells))
	}
}
