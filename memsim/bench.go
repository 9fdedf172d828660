package memsim

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/sstabletool/sstabletool/workload"
)

// BenchOptions configure a speed comparison of the memtables (memsim
// --bench): each memtable alone, on the same pre-generated operations,
// after a warm-up run, Runs times, write-only and mixed, with one writer
// and with several.
type BenchOptions struct {
	Kinds       []Kind
	Partitioner Partitioner
	JDK         int
	Cassandra   string
	Shards      int
	// Runs is the number of timed repetitions per memtable and case
	// (default 5), after one untimed warm-up run.
	Runs int
	// ReadFraction is the share of reads in the mixed case (default 0.5):
	// after each write, a read of an already written key with this
	// probability, as the CASSANDRA-7282 comparison did.
	ReadFraction float64
	// Writers lists the writer counts to measure (default 1 and
	// runtime.NumCPU()).
	Writers []int
	// Progress is called after every timed or warm-up run.
	Progress func(done, total int)
}

// BenchResult is one memtable in one case.
type BenchResult struct {
	Workload string `json:"workload"` // "write-only" or "mixed"
	Writers  int    `json:"writers"`
	Memtable string `json:"memtable"`
	Ops      int64  `json:"ops"` // per run
	Runs     int    `json:"runs"`
	// Nanoseconds per op over the runs: median, fastest and slowest.
	NsPerOp    float64 `json:"ns_per_op_median"`
	NsPerOpMin float64 `json:"ns_per_op_min"`
	NsPerOpMax float64 `json:"ns_per_op_max"`
	// OpsPerSecond is the median run's throughput (all writers together).
	OpsPerSecond float64 `json:"ops_per_second"`
	// VsSkipList is the skip list's median time over this memtable's
	// (above 1: faster than the skip list); VsSkipListMin and Max are the
	// extremes of the ratio of runs made back to back.
	VsSkipList    float64 `json:"speed_vs_skiplist"`
	VsSkipListMin float64 `json:"speed_vs_skiplist_min"`
	VsSkipListMax float64 `json:"speed_vs_skiplist_max"`
}

// BenchReport is a whole comparison.
type BenchReport struct {
	Runs         int           `json:"runs"`
	WarmupRuns   int           `json:"warmup_runs"`
	ReadFraction float64       `json:"read_fraction"`
	Cores        int           `json:"cores"`
	Results      []BenchResult `json:"results"`
}

// benchOp is one op of a pre-generated stream: a write (an index into the
// writes) or a read of the key of an earlier write.
type benchOp struct {
	write int32 // -1 for a read
	read  int32 // the write whose key is read
}

// CollectWrites reads a source's writes into memory (each op its own
// copy), so that every memtable and run replays the same ops and the
// generator stays outside the timed region.
func CollectWrites(src workload.Source, limit int64) ([]workload.Op, error) {
	var ops []workload.Op
	var op workload.Op
	for limit < 0 || int64(len(ops)) < limit {
		ok, err := src.Next(&op)
		if err != nil {
			return nil, fmt.Errorf("op %d: %w", len(ops)+1, err)
		}
		if !ok {
			break
		}
		if op.Kind != workload.OpWrite {
			continue
		}
		ops = append(ops, cloneOp(&op))
	}
	return ops, nil
}

func cloneOp(op *workload.Op) workload.Op {
	c := *op
	c.Key = slices.Clone(op.Key)
	c.Clustering = cloneValues(op.Clustering)
	c.RangeEnd = cloneValues(op.RangeEnd)
	c.Cells = slices.Clone(op.Cells)
	for i := range c.Cells {
		c.Cells[i].Value = slices.Clone(c.Cells[i].Value)
		c.Cells[i].Path = slices.Clone(c.Cells[i].Path)
	}
	c.ComplexDeletions = slices.Clone(op.ComplexDeletions)
	return c
}

func cloneValues(v [][]byte) [][]byte {
	if v == nil {
		return nil
	}
	out := make([][]byte, len(v))
	for i := range v {
		out[i] = slices.Clone(v[i])
	}
	return out
}

// RunBench measures the memtables on writes (see CollectWrites). With W
// writers the ops are split by token range into W memtables, each written
// by its own goroutine, as Cassandra's sharded memtables are (each shard
// has one writer at a time): the Go structures are single-writer, so this
// measures how each scales across cores, not contention inside one
// structure.
func RunBench(writes []workload.Op, schema *workload.Schema, o BenchOptions) (*BenchReport, error) {
	if len(o.Kinds) == 0 {
		o.Kinds = Kinds
	}
	// Every ratio is to the skip list, so it always runs: asked for the
	// trie alone, the report still says how it compares.
	if !slices.Contains(o.Kinds, SkipList) {
		o.Kinds = append([]Kind{SkipList}, o.Kinds...)
	}
	if o.Runs <= 0 {
		o.Runs = 5
	}
	if o.ReadFraction <= 0 {
		o.ReadFraction = 0.5
	}
	if o.ReadFraction >= 1 {
		return nil, fmt.Errorf("read fraction %v: want below 1", o.ReadFraction)
	}
	if len(o.Writers) == 0 {
		o.Writers = []int{1}
		if n := runtime.NumCPU(); n > 1 {
			o.Writers = append(o.Writers, n)
		}
	}
	if len(writes) == 0 {
		return nil, fmt.Errorf("no writes to replay")
	}
	for i := range writes {
		if err := checkOp(&writes[i]); err != nil {
			return nil, fmt.Errorf("op %d: %w", i+1, err)
		}
	}
	rep := &BenchReport{Runs: o.Runs, WarmupRuns: 1, ReadFraction: o.ReadFraction, Cores: runtime.NumCPU()}
	mixed := mixOps(len(writes), o.ReadFraction)
	writeOnly := make([]benchOp, len(writes))
	for i := range writeOnly {
		writeOnly[i] = benchOp{write: int32(i)}
	}
	cases := []struct {
		name string
		ops  []benchOp
	}{{"write-only", writeOnly}, {"mixed", mixed}}
	total := len(cases) * len(o.Writers) * len(o.Kinds) * (o.Runs + 1)
	done := 0
	for _, c := range cases {
		for _, w := range o.Writers {
			shards := splitByToken(c.ops, writes, o.Partitioner, w)
			times := make([][]time.Duration, len(o.Kinds))
			for run := -1; run < o.Runs; run++ {
				// Rotate the order from run to run, so that no memtable
				// always runs after the same one.
				for j := range o.Kinds {
					k := (j + run + 1) % len(o.Kinds)
					d, err := benchRun(o.Kinds[k], writes, shards, schema, o)
					if err != nil {
						return nil, fmt.Errorf("%s %s: %w", c.name, o.Kinds[k], err)
					}
					if run >= 0 {
						times[k] = append(times[k], d)
					}
					done++
					if o.Progress != nil {
						o.Progress(done, total)
					}
				}
			}
			base := -1
			for k, kind := range o.Kinds {
				if kind == SkipList {
					base = k
				}
			}
			for k, kind := range o.Kinds {
				r := BenchResult{Workload: c.name, Writers: w, Memtable: kind.String(), Ops: int64(len(c.ops)), Runs: o.Runs}
				ns := make([]float64, len(times[k]))
				for i, d := range times[k] {
					ns[i] = float64(d.Nanoseconds()) / float64(len(c.ops))
				}
				r.NsPerOp, r.NsPerOpMin, r.NsPerOpMax = median(ns), slices.Min(ns), slices.Max(ns)
				if r.NsPerOp > 0 {
					r.OpsPerSecond = 1e9 / r.NsPerOp
				}
				if base >= 0 {
					var ratios []float64
					for i := range times[k] {
						ratios = append(ratios, float64(times[base][i])/float64(times[k][i]))
					}
					var baseNs []float64
					for _, d := range times[base] {
						baseNs = append(baseNs, float64(d.Nanoseconds())/float64(len(c.ops)))
					}
					r.VsSkipList = median(baseNs) / r.NsPerOp
					r.VsSkipListMin, r.VsSkipListMax = slices.Min(ratios), slices.Max(ratios)
				}
				rep.Results = append(rep.Results, r)
			}
		}
	}
	return rep, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// mixOps interleaves reads of already written keys with the writes: after
// each write, a read with probability frac (a fixed seed, so every
// memtable and run sees the same stream).
func mixOps(writes int, frac float64) []benchOp {
	rng := rand.New(rand.NewPCG(7282, 1))
	out := make([]benchOp, 0, int(float64(writes)/(1-frac))+1)
	for i := 0; i < writes; i++ {
		out = append(out, benchOp{write: int32(i)})
		for rng.Float64() < frac {
			out = append(out, benchOp{write: -1, read: int32(rng.IntN(i + 1))})
		}
	}
	return out
}

// splitByToken gives each of w writers the ops of one token range (equal
// ranges of the order token's top bits), in stream order.
func splitByToken(ops []benchOp, writes []workload.Op, p Partitioner, w int) [][]benchOp {
	out := make([][]benchOp, w)
	for _, op := range ops {
		i := op.write
		if i < 0 {
			i = op.read
		}
		tok := p.orderToken(writes[i].Key)
		s := int((tok >> 32) * uint64(w) >> 32)
		out[s] = append(out[s], op)
	}
	return out
}

// benchRun replays the shards into fresh memtables of one kind, one
// goroutine per shard, and returns the wall time. Only the replay is
// timed: the memtables are built and the heap collected before.
func benchRun(kind Kind, writes []workload.Op, shards [][]benchOp, schema *workload.Schema, o BenchOptions) (time.Duration, error) {
	ms := make([]*Memtable, len(shards))
	for i := range ms {
		m, err := NewMemtable(Config{Kind: kind, Partitioner: o.Partitioner, JDK: o.JDK, Cassandra: o.Cassandra, Shards: o.Shards}, schema)
		if err != nil {
			return 0, err
		}
		ms[i] = m
	}
	runtime.GC()
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	start := time.Now()
	for i := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := ms[i]
			for _, op := range shards[i] {
				if op.write >= 0 {
					if err := m.Apply(&writes[op.write]); err != nil {
						errs[i] = err
						return
					}
					continue
				}
				if _, ok := m.Read(writes[op.read].Key); !ok {
					errs[i] = fmt.Errorf("internal error: written key %x not found", writes[op.read].Key)
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	runtime.KeepAlive(ms)
	return d, nil
}
