package memsim

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/memsim/internal/jvm"
)

// hoObjects walks the hash-ordered list from its first sentinel and counts
// what the Java structure would hold: entry nodes, sentinel nodes, and the
// bucket array's length. It also checks the list is in (hash, key) order
// and that every bucket's sentinel is on it.
func hoObjects(t *testing.T, h *hashOrdered) (entries, sentinels, buckets int64) {
	t.Helper()
	onList := map[uint32]bool{}
	var prevH uint64
	for n := h.index[0]; n != 0; n = h.nodes.at(n).next {
		nd := h.nodes.at(n)
		if nd.h < prevH {
			t.Fatalf("list out of hash order at node %d", n)
		}
		prevH = nd.h
		onList[n] = true
		if nd.id == 0 {
			sentinels++
		} else {
			entries++
		}
	}
	for b, s := range h.index {
		if !onList[s] || h.nodes.at(s).id != 0 {
			t.Fatalf("bucket %d: sentinel %d not on the list", b, s)
		}
	}
	return entries, sentinels, int64(len(h.index))
}

// The hash-ordered memtable is charged exactly the objects its structure
// holds, counted one by one, at three sizes (the bucket array doubles in
// between, so the cost per entry differs): compared with the skip list fed
// the same writes, the difference is the skip list's per-partition map
// entry against the hash-ordered nodes, sentinels and bucket array.
func TestHashOrderedBytesObjectByObject(t *testing.T) {
	for _, n := range []int{1000, 20000, 100000} {
		m, err := NewMemtable(Config{Kinds: []Kind{SkipList, HashOrdered}}, smallSchema)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			apply(t, m, insert(uint64(i), uint64(i), 100))
		}
		h := m.lane(HashOrdered).ho
		entries, sentinels, buckets := hoObjects(t, h)
		if entries != int64(n) {
			t.Fatalf("%d writes: %d entries on the list", n, entries)
		}
		if buckets*hoMaxLoad < entries || buckets*hoMaxLoad/2 >= entries && buckets > 1 {
			t.Errorf("%d entries in %d buckets: want load in (%d/2, %d]", entries, buckets, hoMaxLoad, hoMaxLoad)
		}
		l := m.st.acct.L
		// One sentinel comes with the empty map and is not charged, like
		// an empty trie's first buffer.
		structure := (entries+sentinels-1)*l.HashOrderedNode + jvm.RefArray(buckets) - jvm.RefArray(1)
		for _, at := range AllocTypes {
			sl, ho := m.AccountOf(SkipList), m.AccountOf(HashOrdered)
			slEntry := RowOverhead(&l, at, SkipListEntry(&l)) - RowOverhead(&l, at, 0)
			want := sl.On[at] - int64(n)*slEntry + structure
			if ho.On[at] != want {
				t.Errorf("%d partitions %s: hash-ordered on heap %d, object count gives %d (structure %d B = %.1f B/partition)",
					n, at, ho.On[at], want, structure, float64(structure)/float64(n))
			}
			if ho.Off[at] != sl.Off[at] || ho.Live != sl.Live {
				t.Errorf("%s: off heap or live data differ from the skip list's", at)
			}
		}
		t.Logf("%d partitions: %d sentinels, %d buckets, %.1f B/partition (skip list entry %.1f)",
			n, sentinels, buckets, float64(structure)/float64(n), SkipListEntry(&l))
	}
}

// Sequential keys under ByteOrderedPartitioner share their leading bytes;
// bucketed by those bytes they all fell into one bucket and every insert
// walked the whole list. Ordered by a hash of the key, a seek walks a few
// nodes whatever the keys.
func TestHashOrderedByteOrderedWalk(t *testing.T) {
	for _, part := range []Partitioner{ByteOrdered, Murmur3} {
		m, err := NewMemtable(Config{Kind: HashOrdered, Partitioner: part}, smallSchema)
		if err != nil {
			t.Fatal(err)
		}
		const n = 20000
		for i := range n {
			op := insert(uint64(i), 1, 100)
			op.Key = []byte(fmt.Sprintf("user:%012d", i)) // same first 8 bytes for all
			apply(t, m, op)
		}
		h := m.lane(HashOrdered).ho
		if per := float64(h.walked) / n; per > 4 {
			t.Errorf("%s: %.1f nodes walked per insert, want O(1) (<= 4)", part, per)
		}
		for i := range n {
			if _, ok := m.Read([]byte(fmt.Sprintf("user:%012d", i))); !ok {
				t.Fatalf("%s: key %d lost", part, i)
			}
		}
		if _, ok := m.Read([]byte("user:x")); ok {
			t.Errorf("%s: absent key found", part)
		}
	}
}

// BenchmarkHashOrderedByteOrderedLinear replays n and 4n sequential
// ByteOrdered keys into the hash-ordered memtable and reports the time per
// op of the larger run against the smaller one: about 1 when a replay is
// linear, about 4 if it were quadratic (as bucketing by the leading key
// bytes made it). The skip list's ratio, measured in the same run, is the
// baseline (log n). Each size is replayed five times per iteration and the
// fastest replay counts, so that a collection or another process on a
// shared machine does not decide the ratio (one replay each swung it from
// 1.5 to 4.4).
func BenchmarkHashOrderedByteOrderedLinear(b *testing.B) {
	const n, repeats = 50000, 5
	keys := make([][]byte, 4*n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("user:%012d", i))
	}
	run := func(kind Kind, count int) time.Duration {
		m, err := NewMemtable(Config{Kind: kind, Partitioner: ByteOrdered}, smallSchema)
		if err != nil {
			b.Fatal(err)
		}
		op := insert(0, 1, 100)
		start := time.Now()
		for _, k := range keys[:count] {
			op.Key = k
			if err := m.Apply(op); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	fastest := func(kind Kind, count int) time.Duration {
		best := time.Duration(math.MaxInt64)
		for range repeats {
			best = min(best, run(kind, count))
		}
		return best
	}
	b.ReportAllocs()
	growth := map[Kind]float64{}
	for _, kind := range []Kind{HashOrdered, SkipList} {
		var small, large time.Duration
		for i := 0; i < b.N; i++ {
			small += fastest(kind, n)
			large += fastest(kind, 4*n)
		}
		growth[kind] = float64(large) / 4 / float64(small)
		b.ReportMetric(growth[kind], "x-per-op-4n/n-"+kind.String())
		b.ReportMetric(float64(large.Nanoseconds())/float64(4*n*b.N), "ns/op-"+kind.String())
	}
	// The cache misses and collections of a four times larger heap slow
	// both structures alike; against the skip list's growth, a linear
	// hash-ordered replay stays near 1 where a quadratic one reaches 4.
	b.ReportMetric(growth[HashOrdered]/growth[SkipList], "growth-vs-skiplist")
}

// TestKeyStore: keys of every length come back as they went in, those of
// up to 8 bytes from their reference, longer ones from the arena.
func TestKeyStore(t *testing.T) {
	ks := newKeyStore()
	var want [][]byte
	for id := uint32(1); id < 5000; id++ {
		k := make([]byte, int(id)%41)
		for i := range k {
			k[i] = byte(int(id)*7 + i)
		}
		ks.add(id, k)
		want = append(want, k)
	}
	for i, k := range want {
		got := ks.get(uint32(i + 1))
		if !bytes.Equal(got, k) || (len(k) == 0) != (got == nil) {
			t.Fatalf("key %d: got %x, want %x", i+1, got, k)
		}
	}
}
