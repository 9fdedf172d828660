// Package memsim replays a stream of writes and reads into Go memtables
// built like Cassandra's (skip list, trie, hash-ordered) and reports, for
// each memtable and each memtable_allocation_type, the on-heap and off-heap
// bytes Cassandra would account for the same data, the bytes the Go
// structure itself holds, and when flushes would trigger. See
// docs/memsim.md for the model and the Java sources each size comes from.
package memsim

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sstabletool/sstabletool/workload"
)

// Options configure a replay.
type Options struct {
	Kinds       []Kind
	Types       []AllocType
	JDK         int    // 11 (default) or 17
	Cassandra   string // "4.1" (default) or "5.0"
	Shards      int    // TrieMemtable shards (default 1)
	Partitioner Partitioner

	// Flush triggers (MemtablePool.SubPool): a flush starts when owned bytes
	// exceed space * cleanup threshold.
	HeapSpace        int64   // memtable_heap_space in bytes
	OffheapSpace     int64   // memtable_offheap_space in bytes
	CleanupThreshold float64 // memtable_cleanup_threshold

	Samples int // points of the footprint-over-time chart (default 40)
	// Parallel replays up to this many memtable kinds at once (default 1).
	// Each kind holds its own copy of the data, so memory grows with it.
	Parallel int
	// Progress is called now and then during each replay; with Parallel > 1
	// it is called from several goroutines.
	Progress func(kind Kind, done, total int64)
	// MeasureGoHeap runs the garbage collector before and after each
	// replay to measure the Go heap the memtable holds with the runtime
	// (replays then run one at a time). Otherwise go_heap_bytes is the sum
	// of the structure's allocations.
	MeasureGoHeap bool
}

// Sample is the footprint after Ops operations.
type Sample struct {
	Ops     int64
	On, Off [numAllocTypes]int64
}

// ReadStats times the reads of one pattern.
type ReadStats struct {
	Pattern   string  `json:"pattern"`
	Reads     int64   `json:"reads"`
	Found     int64   `json:"found"`
	Rows      int64   `json:"rows"`
	NsPerRead float64 `json:"ns_per_read"`
}

// Result is one memtable and allocation type.
type Result struct {
	Memtable     string  `json:"memtable"`
	Allocation   string  `json:"allocation"`
	Ops          int64   `json:"ops"`
	Writes       int64   `json:"writes"`
	Reads        int64   `json:"reads"`
	Partitions   int64   `json:"partitions"`
	Cells        int64   `json:"cells"`
	OnHeap       int64   `json:"on_heap_bytes"`
	OffHeap      int64   `json:"off_heap_bytes"`
	LiveData     int64   `json:"live_data_bytes"`
	GoHeap       int64   `json:"go_heap_bytes"`
	GoStructure  int64   `json:"go_structure_bytes"`
	TrieBytes    int64   `json:"trie_bytes,omitempty"`
	Seconds      float64 `json:"seconds"`
	OpsPerSecond float64 `json:"ops_per_second"`

	OverheadPerPartition float64 `json:"overhead_per_partition"`
	OverheadPerCell      float64 `json:"overhead_per_cell"`
	// FirstFlushOp is the op after which the first flush would trigger,
	// -1 if none would; Flushes is how many flushes the whole replay would
	// cause (owned bytes / trigger size).
	FirstFlushOp int64       `json:"first_flush_op"`
	Flushes      int64       `json:"flushes"`
	ReadStats    []ReadStats `json:"read_stats,omitempty"`

	Samples []Point `json:"samples,omitempty"`
}

// Point is a chart point of one result.
type Point struct {
	Ops     int64 `json:"ops"`
	OnHeap  int64 `json:"on_heap_bytes"`
	OffHeap int64 `json:"off_heap_bytes"`
}

// SourceFunc opens a fresh copy of the operation stream; every memtable
// kind replays its own copy. total is the number of ops (for progress and
// sampling), or -1 when unknown.
type SourceFunc func() (src workload.Source, total int64, err error)

// Replay runs the stream into each memtable kind in turn and returns one
// Result per kind and allocation type.
func Replay(open SourceFunc, o Options) ([]Result, error) {
	if len(o.Kinds) == 0 {
		o.Kinds = Kinds
	}
	if len(o.Types) == 0 {
		o.Types = AllocTypes
	}
	if o.Samples <= 0 {
		o.Samples = 40
	}
	if o.CleanupThreshold <= 0 {
		o.CleanupThreshold = 1.0 / 3 // 1 / (1 + memtable_flush_writers), 2 writers for one data directory
	}
	if o.MeasureGoHeap {
		o.Parallel = 1 // heap deltas of concurrent replays would mix
	}
	// The structures are mostly large pointer-free chunks: collecting less
	// often costs little memory and saves time.
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	results := make([][]Result, len(o.Kinds))
	errs := make([]error, len(o.Kinds))
	sem := make(chan struct{}, max(o.Parallel, 1))
	var wg sync.WaitGroup
	for i, k := range o.Kinds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i], errs[i] = replayOne(open, k, o)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", k, errs[i])
			}
		}()
	}
	wg.Wait()
	var out []Result
	for i := range results {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, results[i]...)
	}
	return out, nil
}

func replayOne(open SourceFunc, kind Kind, o Options) ([]Result, error) {
	src, total, err := open()
	if err != nil {
		return nil, err
	}
	if c, ok := src.(io.Closer); ok {
		// A replay that stops early leaves the source's files open.
		defer c.Close()
	}
	var before runtime.MemStats
	if o.MeasureGoHeap {
		runtime.GC()
		runtime.ReadMemStats(&before)
	}
	m, err := NewMemtable(Config{Kind: kind, Partitioner: o.Partitioner, JDK: o.JDK, Cassandra: o.Cassandra, Shards: o.Shards}, src.Schema())
	if err != nil {
		return nil, err
	}
	a := m.Account()
	every := int64(1)
	if total > 0 {
		every = max(total/int64(o.Samples), 1)
	}
	progressEvery := int64(1 << 16)
	var samples []Sample
	onLimit := int64(float64(o.HeapSpace) * o.CleanupThreshold)
	offLimit := int64(float64(o.OffheapSpace) * o.CleanupThreshold)
	firstFlush := [numAllocTypes]int64{-1, -1, -1, -1}
	var reads [4]ReadStats
	var readNs [4]time.Duration
	var n, writes int64
	// Writes are applied in batches (searches overlap, see ApplyBatch);
	// a read first applies the writes before it.
	var batch [batchMax]workload.Op
	pending := 0
	after := func(int) {
		n++
		writes++
		for _, t := range o.Types {
			if firstFlush[t] < 0 && ((onLimit > 0 && a.On[t] > onLimit) || (offLimit > 0 && a.Off[t] > offLimit)) {
				firstFlush[t] = n
			}
		}
		if n%every == 0 {
			samples = append(samples, Sample{Ops: n, On: a.On, Off: a.Off})
		}
		if o.Progress != nil && n%progressEvery == 0 {
			o.Progress(kind, n, total)
		}
	}
	flush := func() error {
		if pending == 0 {
			return nil
		}
		err := m.ApplyBatch(batch[:pending], after)
		pending = 0
		if err != nil {
			return fmt.Errorf("op %d: %w", n+1, err)
		}
		return nil
	}
	var readKey []byte
	start := time.Now()
	for {
		op := &batch[pending]
		ok, err := src.Next(op)
		if err != nil {
			return nil, fmt.Errorf("op %d: %w", n+int64(pending)+1, err)
		}
		if !ok {
			break
		}
		if op.Kind != workload.OpRead {
			pending++
			if pending == len(batch) {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			continue
		}
		// Move the read out of the batch slot, apply what precedes it.
		readKey = append(readKey[:0], op.Key...)
		pattern := op.Read & 3
		if err := flush(); err != nil {
			return nil, err
		}
		n++
		t0 := time.Now()
		rows, found := m.Read(readKey)
		d := time.Since(t0)
		rs := &reads[pattern]
		rs.Reads++
		rs.Rows += int64(rows)
		if found {
			rs.Found++
		}
		readNs[pattern] += d
		if n%every == 0 {
			samples = append(samples, Sample{Ops: n, On: a.On, Off: a.Off})
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	if o.Progress != nil {
		o.Progress(kind, n, total)
	}
	if len(samples) == 0 || samples[len(samples)-1].Ops != n {
		samples = append(samples, Sample{Ops: n, On: a.On, Off: a.Off})
	}
	// Without a measurement, the Go heap the memtable holds is what its
	// chunks, slices and index were allocated with.
	goHeap := m.GoBytes()
	if o.MeasureGoHeap {
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		goHeap = int64(after.HeapAlloc) - int64(before.HeapAlloc)
		runtime.KeepAlive(m)
	}
	secs := elapsed.Seconds()
	var rstats []ReadStats
	var nreads int64
	for i := range reads {
		if reads[i].Reads == 0 {
			continue
		}
		reads[i].Pattern = workload.ReadPattern(i).String()
		reads[i].NsPerRead = float64(readNs[i].Nanoseconds()) / float64(reads[i].Reads)
		nreads += reads[i].Reads
		rstats = append(rstats, reads[i])
	}
	var out []Result
	for _, t := range o.Types {
		r := Result{
			Memtable: kind.String(), Allocation: t.String(),
			Ops: n, Writes: writes, Reads: nreads, Partitions: m.Partitions(), Cells: a.Cells,
			OnHeap: a.On[t], OffHeap: a.Off[t], LiveData: a.Live,
			GoHeap: goHeap, GoStructure: m.GoBytes(), TrieBytes: m.TrieUsedBytes(),
			Seconds: secs, FirstFlushOp: firstFlush[t], ReadStats: rstats,
		}
		if secs > 0 {
			r.OpsPerSecond = float64(n) / secs
		}
		over := float64(a.On[t] + a.Off[t] - a.Live)
		if r.Partitions > 0 {
			r.OverheadPerPartition = over / float64(r.Partitions)
		}
		if r.Cells > 0 {
			r.OverheadPerCell = over / float64(r.Cells)
		}
		if onLimit > 0 {
			r.Flushes = a.On[t] / onLimit
		}
		if offLimit > 0 {
			r.Flushes = max(r.Flushes, a.Off[t]/offLimit)
		}
		for _, s := range samples {
			r.Samples = append(r.Samples, Point{Ops: s.Ops, OnHeap: s.On[t], OffHeap: s.Off[t]})
		}
		out = append(out, r)
	}
	return out, nil
}

// GeneratorSource opens a profile's generator for Replay.
func GeneratorSource(p *workload.Profile, ops int64) SourceFunc {
	verr := p.Validate() // once, before replays share p
	return func() (workload.Source, int64, error) {
		if verr != nil {
			return nil, 0, verr
		}
		g, err := workload.NewGenerator(p, ops)
		if err != nil {
			return nil, 0, err
		}
		return g, g.Total(), nil
	}
}
