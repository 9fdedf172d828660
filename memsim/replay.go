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

	// SampleGrowth spaces the points of the footprint-over-operations
	// curve: one after 256 ops, then each after SampleGrowth times as many
	// (default 1.15, about 16 points per tenfold), so that a curve drawn
	// against the logarithm of the op count is evenly covered.
	SampleGrowth float64
	// Progress is called now and then during the replay.
	Progress func(done, total int64)
	// MeasureGoHeap runs the garbage collector before and after the replay
	// to measure the Go heap the memtables hold with the runtime. Otherwise
	// go_heap_bytes is the sum of the structure's allocations.
	MeasureGoHeap bool
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
	Memtable   string `json:"memtable"`
	Allocation string `json:"allocation"`
	Ops        int64  `json:"ops"`
	Writes     int64  `json:"writes"`
	Reads      int64  `json:"reads"`
	Partitions int64  `json:"partitions"`
	Cells      int64  `json:"cells"`
	OnHeap     int64  `json:"on_heap_bytes"`
	OffHeap    int64  `json:"off_heap_bytes"`
	LiveData   int64  `json:"live_data_bytes"`
	// GoHeap is the Go heap of the whole replay (all memtables share their
	// rows), measured with --go-heap; GoStructure what this memtable alone
	// would hold: the shared store and its own partition map.
	GoHeap      int64 `json:"go_heap_bytes"`
	GoStructure int64 `json:"go_structure_bytes"`
	TrieBytes   int64 `json:"trie_bytes,omitempty"`
	// Seconds is the whole replay (shared by every memtable), MapSeconds
	// the part spent in this memtable's partition map. Speed comparisons
	// between memtables are for --bench, which runs each alone.
	Seconds      float64 `json:"seconds"`
	MapSeconds   float64 `json:"map_seconds"`
	OpsPerSecond float64 `json:"ops_per_second"`

	OnHeapPerPartition   float64 `json:"on_heap_per_partition"`
	OffHeapPerPartition  float64 `json:"off_heap_per_partition"`
	LivePerPartition     float64 `json:"live_per_partition"`
	OverheadPerPartition float64 `json:"overhead_per_partition"`
	OverheadPerCell      float64 `json:"overhead_per_cell"`
	// FirstFlushOp is the op after which the first flush would trigger,
	// -1 if none would; Flushes is how many flushes the whole replay would
	// cause (owned bytes / trigger size). OpsPerFlush is how many writes
	// fill the trigger size at this replay's average bytes per write (the
	// binding pool of heap and off heap), FlushesPerMillion its inverse per
	// million writes; FlushPool says which pool binds ("heap", "offheap").
	FirstFlushOp      int64       `json:"first_flush_op"`
	Flushes           int64       `json:"flushes"`
	OpsPerFlush       float64     `json:"ops_per_flush"`
	FlushesPerMillion float64     `json:"flushes_per_million_writes"`
	FlushPool         string      `json:"flush_pool,omitempty"`
	ReadStats         []ReadStats `json:"read_stats,omitempty"`

	Samples []Point `json:"samples,omitempty"`
}

// Point is a curve point of one result.
type Point struct {
	Ops        int64 `json:"ops"`
	Partitions int64 `json:"partitions"`
	OnHeap     int64 `json:"on_heap_bytes"`
	OffHeap    int64 `json:"off_heap_bytes"`
}

// SourceFunc opens the operation stream. total is the number of ops (for
// progress and sampling), or -1 when unknown.
type SourceFunc func() (src workload.Source, total int64, err error)

// sample is the footprint of every kind after some ops.
type sample struct {
	ops, partitions int64
	on, off         [][numAllocTypes]int64 // per kind
}

// Replay runs the stream once into every memtable kind (sharing the
// decoded operations, rows and their accounting, see Memtable) and
// returns one Result per kind and allocation type.
func Replay(open SourceFunc, o Options) ([]Result, error) {
	if len(o.Kinds) == 0 {
		o.Kinds = Kinds
	}
	if len(o.Types) == 0 {
		o.Types = AllocTypes
	}
	if o.SampleGrowth <= 1 {
		o.SampleGrowth = 1.15
	}
	if o.CleanupThreshold <= 0 {
		o.CleanupThreshold = 1.0 / 3 // 1 / (1 + memtable_flush_writers), 2 writers for one data directory
	}
	// The structures are mostly large pointer-free chunks: collecting less
	// often costs little memory and saves time.
	defer debug.SetGCPercent(debug.SetGCPercent(50))
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
	m, err := NewMemtable(Config{Kinds: o.Kinds, Partitioner: o.Partitioner, JDK: o.JDK, Cassandra: o.Cassandra, Shards: o.Shards}, src.Schema())
	if err != nil {
		return nil, err
	}
	nk := len(m.lanes)
	nextSample := int64(256)
	due := func(n int64) bool {
		if isDecade(n) {
			return true
		}
		if n < nextSample {
			return false
		}
		nextSample = max(int64(float64(nextSample)*o.SampleGrowth), nextSample+1)
		return true
	}
	const progressEvery = 1 << 16
	var samples []sample
	onLimit := int64(float64(o.HeapSpace) * o.CleanupThreshold)
	offLimit := int64(float64(o.OffheapSpace) * o.CleanupThreshold)
	firstFlush := make([][numAllocTypes]int64, nk)
	for k := range firstFlush {
		firstFlush[k] = [numAllocTypes]int64{-1, -1, -1, -1}
	}
	shared := m.st.acct
	takeSample := func(n int64) {
		s := sample{ops: n, partitions: m.partitions, on: make([][numAllocTypes]int64, nk), off: make([][numAllocTypes]int64, nk)}
		for k, ln := range m.lanes {
			for t := range s.on[k] {
				s.on[k][t] = shared.On[t] + ln.own.On[t]
				s.off[k][t] = shared.Off[t] + ln.own.Off[t]
			}
		}
		samples = append(samples, s)
	}
	reads := make([][4]ReadStats, nk)
	readNs := make([][4]time.Duration, nk)
	var n, writes int64
	after := func() {
		n++
		writes++
		for k, ln := range m.lanes {
			ff := &firstFlush[k]
			for _, t := range o.Types {
				if ff[t] < 0 && ((onLimit > 0 && shared.On[t]+ln.own.On[t] > onLimit) || (offLimit > 0 && shared.Off[t]+ln.own.Off[t] > offLimit)) {
					ff[t] = n
				}
			}
		}
		if due(n) {
			takeSample(n)
		}
		if o.Progress != nil && n%progressEvery == 0 {
			o.Progress(n, total)
		}
	}
	p := newPipeline(m, after)
	defer p.close()
	var readKey []byte
	var seq int64 // ops read from the source
	start := time.Now()
	for {
		b, err := p.batch()
		if err != nil {
			return nil, err
		}
		op := &b.ops[b.n]
		ok, err := src.Next(op)
		if err != nil {
			return nil, fmt.Errorf("op %d: %w", seq+1, err)
		}
		if !ok {
			break
		}
		seq++
		if op.Kind != workload.OpRead {
			if b.n == 0 {
				b.first = seq
			}
			b.n++
			if b.n == pipeBatch {
				if err := p.submit(); err != nil {
					return nil, err
				}
			}
			continue
		}
		// A read sees every write before it: finish them, then read
		// through each map (their goroutines are idle).
		readKey = append(readKey[:0], op.Key...)
		pattern := op.Read & 3
		if err := p.drain(); err != nil {
			return nil, err
		}
		n++
		for k, ln := range m.lanes {
			t0 := time.Now()
			rows, found := m.ReadIn(ln.kind, readKey)
			readNs[k][pattern] += time.Since(t0)
			rs := &reads[k][pattern]
			rs.Reads++
			rs.Rows += int64(rows)
			if found {
				rs.Found++
			}
		}
		if due(n) {
			takeSample(n)
		}
	}
	if err := p.drain(); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	if o.Progress != nil {
		o.Progress(n, total)
	}
	if len(samples) == 0 || samples[len(samples)-1].ops != n {
		takeSample(n)
	}
	var goHeap int64
	if o.MeasureGoHeap {
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		goHeap = int64(after.HeapAlloc) - int64(before.HeapAlloc)
		runtime.KeepAlive(m)
	}
	secs := elapsed.Seconds()
	var out []Result
	for k, ln := range m.lanes {
		a := m.AccountOf(ln.kind)
		var rstats []ReadStats
		var nreads int64
		for i := range reads[k] {
			if reads[k][i].Reads == 0 {
				continue
			}
			rs := reads[k][i]
			rs.Pattern = workload.ReadPattern(i).String()
			rs.NsPerRead = float64(readNs[k][i].Nanoseconds()) / float64(rs.Reads)
			nreads += rs.Reads
			rstats = append(rstats, rs)
		}
		gs := m.GoBytesOf(ln.kind)
		if !o.MeasureGoHeap {
			goHeap = m.st.goBytes()
			for _, l2 := range m.lanes {
				goHeap += l2.idx.goBytes()
			}
		}
		var trieBytes int64
		if ln.trie != nil {
			trieBytes = m.TrieUsedBytes()
		}
		for _, t := range o.Types {
			r := Result{
				Memtable: ln.kind.String(), Allocation: t.String(),
				Ops: n, Writes: writes, Reads: nreads, Partitions: m.Partitions(), Cells: a.Cells,
				OnHeap: a.On[t], OffHeap: a.Off[t], LiveData: a.Live,
				GoHeap: goHeap, GoStructure: gs, TrieBytes: trieBytes,
				Seconds: secs, MapSeconds: m.MapSeconds(ln.kind), FirstFlushOp: firstFlush[k][t], ReadStats: rstats,
			}
			if secs > 0 {
				r.OpsPerSecond = float64(n) / secs
			}
			over := float64(a.On[t] + a.Off[t] - a.Live)
			if p := float64(r.Partitions); p > 0 {
				r.OverheadPerPartition = over / p
				r.OnHeapPerPartition = float64(a.On[t]) / p
				r.OffHeapPerPartition = float64(a.Off[t]) / p
				r.LivePerPartition = float64(a.Live) / p
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
			r.OpsPerFlush, r.FlushPool = opsPerFlush(a.On[t], a.Off[t], writes, onLimit, offLimit)
			if r.OpsPerFlush > 0 {
				r.FlushesPerMillion = 1e6 / r.OpsPerFlush
			}
			for _, s := range samples {
				r.Samples = append(r.Samples, Point{Ops: s.ops, Partitions: s.partitions, OnHeap: s.on[k][t], OffHeap: s.off[k][t]})
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// opsPerFlush is how many writes fill a flush trigger at the average bytes
// per write of a replay, for the pool (heap or off heap) that fills first.
func opsPerFlush(on, off, writes, onLimit, offLimit int64) (float64, string) {
	if writes == 0 {
		return 0, ""
	}
	best, pool := 0.0, ""
	for _, c := range [...]struct {
		bytes, limit int64
		name         string
	}{{on, onLimit, "heap"}, {off, offLimit, "offheap"}} {
		if c.limit <= 0 || c.bytes <= 0 {
			continue
		}
		ops := float64(c.limit) / (float64(c.bytes) / float64(writes))
		if pool == "" || ops < best {
			best, pool = ops, c.name
		}
	}
	return best, pool
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

// pipeline runs each memtable kind's partition map on a goroutine of its
// own, up to pipeDepth batches ahead of the store, which merges the rows
// and accounts every op in op order on the caller's goroutine. The maps
// share nothing they write (see lane), so on several cores the replay
// takes about as long as its slowest part instead of the sum of all.
type pipeline struct {
	m        *Memtable
	after    func()
	lanesIn  []chan *pbatch
	free     []*pbatch
	inflight []*pbatch
	cur      *pbatch
	wg       sync.WaitGroup
}

// pipeDepth batches are in flight at most: enough for the map goroutines
// to run ahead of the store, few enough to keep their ops in cache.
const pipeDepth = 4

// pbatch is a batch of writes on its way through the pipeline.
type pbatch struct {
	ops   [pipeBatch]workload.Op
	n     int
	first int64 // op number of ops[0] in the stream
	toks  [pipeBatch]uint64
	keys  [pipeBatch][]byte
	outs  []laneOut
	outp  []*laneOut
	done  chan struct{} // one send per lane
}

func newPipeline(m *Memtable, after func()) *pipeline {
	p := &pipeline{m: m, after: after}
	for range pipeDepth {
		b := &pbatch{outs: make([]laneOut, len(m.lanes)), done: make(chan struct{}, len(m.lanes))}
		for k := range b.outs {
			b.outp = append(b.outp, &b.outs[k])
		}
		p.free = append(p.free, b)
	}
	for k, ln := range m.lanes {
		in := make(chan *pbatch, pipeDepth)
		p.lanesIn = append(p.lanesIn, in)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for b := range in {
				ln.run(&b.outs[k], b.toks[:b.n], b.keys[:b.n])
				b.done <- struct{}{}
			}
		}()
	}
	return p
}

// batch returns the batch being filled, finishing the oldest batch in
// flight first when none is free.
func (p *pipeline) batch() (*pbatch, error) {
	if p.cur != nil {
		return p.cur, nil
	}
	if len(p.free) == 0 {
		if err := p.complete(); err != nil {
			return nil, err
		}
	}
	p.cur = p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.cur.n = 0
	return p.cur, nil
}

// submit hands the batch being filled to the maps. A bad op is reported
// after the ops before it are applied, as applying one by one would.
func (p *pipeline) submit() error {
	b := p.cur
	if b == nil || b.n == 0 {
		return nil
	}
	p.cur = nil
	for i := 0; i < b.n; i++ {
		if err := checkOp(&b.ops[i]); err != nil {
			bad := b.first + int64(i)
			b.n = i
			if i > 0 {
				p.send(b)
			} else {
				p.free = append(p.free, b)
			}
			if derr := p.drain(); derr != nil {
				return derr
			}
			return fmt.Errorf("op %d: %w", bad, err)
		}
		b.toks[i] = p.m.part.orderToken(b.ops[i].Key)
		b.keys[i] = b.ops[i].Key
	}
	p.send(b)
	return nil
}

func (p *pipeline) send(b *pbatch) {
	for _, in := range p.lanesIn {
		in <- b
	}
	p.inflight = append(p.inflight, b)
}

// complete waits for the maps to finish the oldest batch in flight, then
// merges and accounts its ops in order.
func (p *pipeline) complete() error {
	b := p.inflight[0]
	p.inflight = p.inflight[1:]
	for range p.lanesIn {
		<-b.done
	}
	defer func() { p.free = append(p.free, b) }()
	for k := range b.outs {
		if err := b.outs[k].err; err != nil {
			return fmt.Errorf("op %d: %w", b.first+int64(b.outs[k].errAt), err)
		}
	}
	for i := 0; i < b.n; i++ {
		if err := p.m.applyTo(b.outp, i, &b.ops[i]); err != nil {
			return fmt.Errorf("op %d: %w", b.first+int64(i), err)
		}
		p.after()
	}
	return nil
}

// drain submits the batch being filled and completes every batch.
func (p *pipeline) drain() error {
	if err := p.submit(); err != nil {
		return err
	}
	for len(p.inflight) > 0 {
		if err := p.complete(); err != nil {
			return err
		}
	}
	return nil
}

// close waits for the batches still in the maps and stops their
// goroutines.
func (p *pipeline) close() {
	for _, b := range p.inflight {
		for range p.lanesIn {
			<-b.done
		}
	}
	p.inflight = nil
	for _, in := range p.lanesIn {
		close(in)
	}
	p.wg.Wait()
}

// Settings are what a run was made with, carried in its JSON so that a
// result says how it was made.
type Settings struct {
	ToolVersion      string   `json:"tool_version"`
	Source           string   `json:"source"` // "profile" or "sstables"
	Profile          string   `json:"profile,omitempty"`
	ProfileFile      string   `json:"profile_file,omitempty"`   // the profile's path, when it was read from a file
	ProfileFormat    string   `json:"profile_format,omitempty"` // "cassandra-stress" for a cassandra-stress user profile
	Table            string   `json:"table,omitempty"`          // a cassandra-stress profile's keyspace.table
	IgnoredFields    []string `json:"ignored_fields,omitempty"` // its fields that change nothing in the memtables (docs/workload.md)
	SSTables         []string `json:"sstables,omitempty"`
	Ops              int64    `json:"ops"`
	Seed             uint64   `json:"seed"`
	Partitions       int64    `json:"partitions,omitempty"` // the profile's partition count
	Partitioner      string   `json:"partitioner"`
	JDK              int      `json:"jdk"`
	Cassandra        string   `json:"cassandra"`
	Shards           int      `json:"shards"`
	HeapSpace        int64    `json:"memtable_heap_space_bytes"`
	OffheapSpace     int64    `json:"memtable_offheap_space_bytes"`
	CleanupThreshold float64  `json:"memtable_cleanup_threshold"`
	Memtables        []string `json:"memtables"`
	Allocations      []string `json:"allocation_types,omitempty"` // none for --bench: speed does not depend on them
}

// Report is what memsim --json prints and what browse reads back.
type Report struct {
	Settings Settings     `json:"settings"`
	Results  []Result     `json:"results,omitempty"`
	KeyCache *KeyCache    `json:"key_cache,omitempty"`
	Bench    *BenchReport `json:"bench,omitempty"`
}

// isDecade reports whether n is a power of ten from 1000 on: the curve
// always has a point there, for the figures quoted per decade.
func isDecade(n int64) bool {
	if n < 1000 {
		return false
	}
	for n%10 == 0 {
		n /= 10
	}
	return n == 1
}
