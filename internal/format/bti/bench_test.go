package bti

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
)

type benchIndex struct {
	pi     *PartitionIndex
	keys   [][]byte // partition keys, in no particular order
	bcs    [][]byte // their byte-comparable forms, sorted
	hashes []byte   // hash byte per sorted entry
	size   int
	build  time.Duration
}

var (
	benchOnce sync.Once
	benchIdx  *benchIndex
)

// millionKeyIndex builds, once per process, Partitions.db for a million
// Murmur3-partitioned keys in memory.
func millionKeyIndex(b *testing.B) *benchIndex {
	benchOnce.Do(func() {
		const n = 1_000_000
		type kk struct{ key, bc []byte }
		all := make([]kk, n)
		for i := range all {
			k := []byte(fmt.Sprintf("user-%08d", i))
			bc, _ := bytecomparable.DecoratedKey(token.Murmur3, k)
			all[i] = kk{k, bc}
		}
		sort.Slice(all, func(i, j int) bool { return bytes.Compare(all[i].bc, all[j].bc) < 0 })
		start := time.Now()
		var buf bytes.Buffer
		w := NewPartitionsWriter(&buf, token.Murmur3)
		for i, k := range all {
			if err := w.AddData(k.key, int64(i)*100); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Finish(); err != nil {
			b.Fatal(err)
		}
		bi := &benchIndex{build: time.Since(start), size: buf.Len()}
		pi, err := OpenPartitions(trie.BytesSource(buf.Bytes()), "mem", token.Murmur3)
		if err != nil {
			b.Fatal(err)
		}
		bi.pi = pi
		for _, k := range all {
			bi.keys = append(bi.keys, k.key)
			bi.bcs = append(bi.bcs, k.bc)
			bi.hashes = append(bi.hashes, KeyHash(k.key))
		}
		rand.New(rand.NewSource(1)).Shuffle(n, func(i, j int) { bi.keys[i], bi.keys[j] = bi.keys[j], bi.keys[i] })
		benchIdx = bi
	})
	return benchIdx
}

// BenchmarkPartitionsLookup looks up keys of a million-key Partitions.db
// and, in the same run, the same keys by binary search over the sorted
// byte-comparable keys in memory (the baseline). It reports both costs per
// lookup and their ratio (trie / binary search). Keys are looked up in
// byte-comparable form with their hash byte, so both sides measure the
// search alone.
func BenchmarkPartitionsLookup(b *testing.B) {
	bi := millionKeyIndex(b)
	n := len(bi.bcs)
	order := rand.New(rand.NewSource(2)).Perm(n)
	b.ResetTimer()
	var trieTime, bsTime time.Duration
	for i := 0; i < b.N; i++ {
		j := order[i%n]
		bc, h := bi.bcs[j], bi.hashes[j]
		t0 := time.Now()
		p, ok, err := bi.pi.CandidateBC(bc, h)
		t1 := time.Now()
		k := sort.Search(n, func(x int) bool { return bytes.Compare(bi.bcs[x], bc) >= 0 })
		t2 := time.Now()
		if err != nil || !ok || p.DataPos() != int64(j)*100 || k != j {
			b.Fatalf("lookup %d: %+v %v %v, binary search %d", j, p, ok, err, k)
		}
		trieTime += t1.Sub(t0)
		bsTime += t2.Sub(t1)
	}
	b.ReportMetric(float64(trieTime.Nanoseconds())/float64(b.N), "trie-ns/lookup")
	b.ReportMetric(float64(bsTime.Nanoseconds())/float64(b.N), "bsearch-ns/lookup")
	b.ReportMetric(float64(trieTime)/float64(bsTime), "trie/bsearch")
	b.ReportMetric(float64(bi.size)/float64(n), "index-bytes/key")
	b.ReportMetric(bi.build.Seconds(), "build-s")
}

// BenchmarkPartitionsCandidate is a full lookup by partition key: encode
// the decorated key, hash it, walk the trie.
func BenchmarkPartitionsCandidate(b *testing.B) {
	bi := millionKeyIndex(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, err := bi.pi.Candidate(bi.keys[i%len(bi.keys)]); !ok || err != nil {
			b.Fatal("key not found", err)
		}
	}
}
