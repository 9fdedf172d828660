package memsim

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/workload"
)

// benchKeys returns n distinct 8-byte keys (bigint partition keys) and
// their Murmur3 order tokens.
func benchKeys(n int) ([][]byte, []uint64) {
	keys := make([][]byte, n)
	toks := make([]uint64, n)
	buf := make([]byte, 8*n)
	for i := range keys {
		k := buf[8*i : 8*i+8 : 8*i+8]
		binary.BigEndian.PutUint64(k, uint64(i))
		keys[i], toks[i] = k, Murmur3.orderToken(k)
	}
	return keys, toks
}

// mapRun drives one partition map (the part that differs between skip
// list and hash-ordered) with a read fraction, as the CASSANDRA-7282
// comparison did: writes insert new keys, reads look up random written ones.
func mapRun(kind Kind, keys [][]byte, toks []uint64, readFrac float64) (time.Duration, int) {
	l, _ := newLayout(Config{})
	ks := newKeyStore()
	var idx index
	if kind == SkipList {
		idx = newSkipList(ks)
	} else {
		idx = newHashOrdered(ks, Murmur3, &l)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	written, ops := 0, 0
	var k []byte
	var tk uint64
	next := uint32(1)
	create := func() uint32 { ks.add(next, k); next++; return next - 1 }
	start := time.Now()
	for written < len(keys) {
		ops++
		if written > 0 && readFrac > 0 && rng.Float64() < readFrac {
			j := rng.IntN(written)
			if _, ok := idx.get(toks[j], keys[j]); !ok {
				panic("lost key")
			}
			continue
		}
		k, tk = keys[written], toks[written]
		idx.upsert(tk, k, create)
		written++
	}
	return time.Since(start), ops
}

// BenchmarkHashOrderedVsSkipList reports the throughput of the
// hash-ordered map relative to the skip list measured in the same run
// (ratio = skip list time / hash-ordered time for the same operations),
// write-only and with 50% and 90% reads. It measures the partition maps
// alone; BenchmarkMemtableSpeed the whole write path. Neither fails on a
// ratio: CASSANDRA-7282's 1.75-2.75x is what is being measured, not a
// requirement. MEMSIM_BENCH_ENTRIES sets the
// entries written per iteration (default 4M write-only, 1M with reads; the
// published comparison used 40M).
func BenchmarkHashOrderedVsSkipList(b *testing.B) {
	entries := 0
	if s := os.Getenv("MEMSIM_BENCH_ENTRIES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("MEMSIM_BENCH_ENTRIES=%q", s)
		}
		entries = v
	}
	allKeys, allToks := benchKeys(max(entries, 4_000_000))
	for _, rf := range []float64{0, 0.5, 0.9} {
		// Write-only writes 4M entries by default; the read mixes, which
		// run 2x and 10x as many operations, 1M.
		n := entries
		if n == 0 {
			n = 4_000_000
			if rf > 0 {
				n = 1_000_000
			}
		}
		keys, toks := allKeys[:n], allToks[:n]
		b.Run(fmt.Sprintf("reads=%.0f%%", rf*100), func(b *testing.B) {
			var sl, ho time.Duration
			var ops int
			for i := 0; i < b.N; i++ {
				d, n1 := mapRun(SkipList, keys, toks, rf)
				sl += d
				d, n2 := mapRun(HashOrdered, keys, toks, rf)
				ho += d
				if n1 != n2 {
					b.Fatalf("op streams differ: %d vs %d", n1, n2)
				}
				ops += n1
			}
			ratio := float64(sl) / float64(ho)
			b.ReportMetric(ratio, "x-hashordered/skiplist")
			b.ReportMetric(float64(sl.Nanoseconds())/float64(ops), "ns/op-skiplist")
			b.ReportMetric(float64(ho.Nanoseconds())/float64(ops), "ns/op-hashordered")
		})
	}
}

// peakRSS reads the process's high-water resident set (Linux).
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// Published by ReadSmallPartitionsBench for 10,000,000 rows in
// heap_buffers mode (see the issue): SkipListMemtable 5.700 GiB, TrieMemtable
// 4.568 GiB on heap.
const (
	publishedSkipList = 5.700
	publishedTrie     = 4.568
)

// BenchmarkSmallPartitions10M is the reproduction of the published
// figures. It replays MEMSIM_OPS (default 10,000,000) small-partitions
// writes into all three memtables and reports time, ops/s, peak RSS and
// the heap_buffers on-heap GiB against the published figures, failing
// when either is off by more than 10%. It only runs when asked for:
//
//	MEMSIM_10M=1 go test -run '^$' -bench SmallPartitions10M -benchtime 1x ./memsim
func BenchmarkSmallPartitions10M(b *testing.B) {
	if os.Getenv("MEMSIM_10M") == "" {
		b.Skip("set MEMSIM_10M=1 to run the 10M-op reproduction")
	}
	ops := int64(10_000_000)
	if s := os.Getenv("MEMSIM_OPS"); s != "" {
		ops, _ = strconv.ParseInt(s, 10, 64)
	}
	p, _ := workload.Builtin("small-partitions")
	p.Partitions = ops
	for i := 0; i < b.N; i++ {
		start := time.Now()
		rs, err := Replay(GeneratorSource(p, ops), Options{Types: AllocTypes, Shards: 2})
		if err != nil {
			b.Fatal(err)
		}
		secs := time.Since(start).Seconds()
		b.ReportMetric(secs, "s-total")
		b.ReportMetric(float64(3*ops)/secs, "ops/s")
		b.ReportMetric(float64(peakRSS())/(1<<30), "GiB-peak-RSS")
		for _, r := range rs {
			b.Logf("%-11s %-22s on %.3f GiB off %.3f GiB live %.3f GiB %.1fs", r.Memtable, r.Allocation,
				float64(r.OnHeap)/(1<<30), float64(r.OffHeap)/(1<<30), float64(r.LiveData)/(1<<30), r.Seconds)
			if r.Allocation != "heap_buffers" {
				continue
			}
			gib := float64(r.OnHeap) / (1 << 30)
			var want float64
			switch r.Memtable {
			case "skiplist":
				want = publishedSkipList
			case "trie":
				want = publishedTrie
			default:
				b.ReportMetric(gib, "GiB-hashordered")
				continue
			}
			b.ReportMetric(gib, "GiB-"+r.Memtable)
			b.ReportMetric(gib/want, "x-published-"+r.Memtable)
			if ops == 10_000_000 && (gib < want*0.9 || gib > want*1.1) {
				b.Errorf("%s heap_buffers %.3f GiB, published %.3f GiB: off by more than 10%%", r.Memtable, gib, want)
			}
		}
	}
}

// BenchmarkReplay measures the whole write path (generator, map, store,
// accounting) per memtable with allocations, for profiling.
func BenchmarkReplay(b *testing.B) {
	p, _ := workload.Builtin("small-partitions")
	for _, k := range Kinds {
		b.Run(k.String(), func(b *testing.B) {
			p.Partitions = int64(b.N)
			g, _ := workload.NewGenerator(p, int64(b.N))
			m, _ := NewMemtable(Config{Kind: k, Shards: 2}, g.Schema())
			var op workload.Op
			b.ReportAllocs()
			b.ResetTimer()
			for {
				ok, _ := g.Next(&op)
				if !ok {
					break
				}
				if err := m.Apply(&op); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMemtableSpeed is memsim --bench as a Go benchmark: every
// memtable alone on the same pre-generated small-partitions writes
// (MEMSIM_BENCH_OPS, default 200,000), warm-up and interleaved runs,
// write-only and mixed, one writer and one per core. It reports each
// memtable's median ns/op and its speed relative to the skip list measured
// in the same run.
//
//	go test -run '^$' -bench MemtableSpeed -benchtime 1x -benchmem ./memsim
func BenchmarkMemtableSpeed(b *testing.B) {
	ops := int64(200_000)
	if s := os.Getenv("MEMSIM_BENCH_OPS"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v <= 0 {
			b.Fatalf("MEMSIM_BENCH_OPS=%q", s)
		}
		ops = v
	}
	p, _ := workload.Builtin("small-partitions")
	p.Partitions = ops
	g, err := workload.NewGenerator(p, ops)
	if err != nil {
		b.Fatal(err)
	}
	writes, err := CollectWrites(g, -1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rep, err := RunBench(writes, g.Schema(), BenchOptions{Runs: 3, Shards: 2})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rep.Results {
			name := fmt.Sprintf("%s-w%d-%s", r.Workload, r.Writers, r.Memtable)
			b.ReportMetric(r.NsPerOp, "ns/op-"+name)
			if r.Memtable != SkipList.String() {
				b.ReportMetric(r.VsSkipList, "x-vs-skiplist-"+name)
			}
		}
	}
}

// RunBench's streams: the mixed case reads only keys written before, each
// writer's shard keeps every op of its token range in stream order, and
// every case measures every memtable, the skip list at ratio 1.
func TestRunBenchStreams(t *testing.T) {
	const writes = 5000
	mixed := mixOps(writes, 0.5)
	seen := 0
	for _, op := range mixed {
		if op.write >= 0 {
			if int(op.write) != seen {
				t.Fatalf("write %d out of order", op.write)
			}
			seen++
		} else if int(op.read) >= seen {
			t.Fatalf("read of write %d before it was written", op.read)
		}
	}
	if reads := len(mixed) - writes; reads < writes*8/10 || reads > writes*12/10 {
		t.Errorf("%d reads for %d writes at 50%%", reads, writes)
	}
	p, _ := workload.Builtin("small-partitions")
	p.Partitions = writes
	g, _ := workload.NewGenerator(p, writes)
	ws, err := CollectWrites(g, -1)
	if err != nil || len(ws) != writes {
		t.Fatalf("%d writes, %v", len(ws), err)
	}
	shards := splitByToken(mixed, ws, Murmur3, 3)
	total := 0
	for s, sh := range shards {
		total += len(sh)
		last := -1
		for _, op := range sh {
			i := op.write
			if i < 0 {
				i = op.read
			}
			if got := int((Murmur3.orderToken(ws[i].Key) >> 32) * 3 >> 32); got != s {
				t.Fatalf("op of shard %d in shard %d", got, s)
			}
			if op.write >= 0 {
				if int(op.write) <= last {
					t.Fatal("shard out of stream order")
				}
				last = int(op.write)
			}
		}
	}
	if total != len(mixed) {
		t.Errorf("shards hold %d ops of %d", total, len(mixed))
	}
	rep, err := RunBench(ws, g.Schema(), BenchOptions{Runs: 1, Writers: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2*2*len(Kinds) {
		t.Fatalf("%d results", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.NsPerOp <= 0 || r.VsSkipList <= 0 || (r.Memtable == "skiplist" && r.VsSkipList != 1) {
			t.Errorf("%+v", r)
		}
	}
	// Without the skip list among the memtables asked for, it still runs
	// as the baseline: no ratio is left at 0.
	rep, err = RunBench(ws, g.Schema(), BenchOptions{Runs: 1, Writers: []int{1}, Kinds: []Kind{Trie}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2*2 {
		t.Fatalf("trie alone: %d results, want the skip list's and the trie's for two workloads", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.VsSkipList <= 0 || r.VsSkipListMin <= 0 {
			t.Errorf("trie alone: %+v", r)
		}
	}
	bad := append([]workload.Op{}, ws[:3]...)
	bad[2].Key = nil
	if _, err := RunBench(bad, g.Schema(), BenchOptions{Runs: 1}); err == nil || !strings.Contains(err.Error(), "op 3") {
		t.Errorf("bad op: %v", err)
	}
}
