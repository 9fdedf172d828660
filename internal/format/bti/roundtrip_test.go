package bti

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
)

type testKey struct {
	key []byte
	pos int64
}

// sortedKeys returns n distinct partition keys in the partitioner's order
// with made-up positions, some in Rows.db and some in Data.db.
func sortedKeys(rng *rand.Rand, p token.Partitioner, n int) []testKey {
	seen := map[string]bool{}
	var keys []testKey
	for len(keys) < n {
		k := make([]byte, 1+rng.Intn(12))
		for i := range k {
			k[i] = "abc\x00\xff012"[rng.Intn(8)]
		}
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		pos := rng.Int63n(1 << uint(8+rng.Intn(40)))
		if rng.Intn(3) == 0 {
			pos = ^pos
		}
		keys = append(keys, testKey{k, pos})
	}
	sort.Slice(keys, func(i, j int) bool { return p.CompareKeys(keys[i].key, keys[j].key) < 0 })
	return keys
}

// TestPartitionsRoundTrip writes Partitions.db for key sets from one key to
// tens of thousands (tries of many pages, with pointers of every width)
// and reads them back: every key's entry, in order, with its position and
// hash, lookups of present and absent keys, and no node crossing a page.
func TestPartitionsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, p := range []token.Partitioner{token.Murmur3, token.ByteOrdered, token.Random} {
		for _, n := range []int{1, 2, 3, 100, 3000, 30000} {
			if testing.Short() && n > 3000 {
				continue
			}
			keys := sortedKeys(rng, p, n)
			var buf bytes.Buffer
			w := NewPartitionsWriter(&buf, p)
			for _, k := range keys {
				if err := w.Add(k.key, k.pos); err != nil {
					t.Fatal(err)
				}
			}
			size, err := w.Finish()
			if err != nil || size != int64(buf.Len()) {
				t.Fatalf("Finish: %d %v (buffer %d)", size, err, buf.Len())
			}
			pi, err := OpenPartitions(trie.BytesSource(buf.Bytes()), "mem", p)
			if err != nil {
				t.Fatal(err)
			}
			if pi.KeyCount != int64(n) || !bytes.Equal(pi.FirstKey, keys[0].key) || !bytes.Equal(pi.LastKey, keys[n-1].key) {
				t.Fatalf("%s n=%d: footer count %d first %x last %x", p.Name(), n, pi.KeyCount, pi.FirstKey, pi.LastKey)
			}
			it := pi.Iter()
			i := 0
			for ok := it.First(); ok; ok = it.Next() {
				e := it.Entry()
				bc, _ := bytecomparable.DecoratedKey(p, keys[i].key)
				if e.Pos != keys[i].pos || e.Hash != KeyHash(keys[i].key) || !bytes.HasPrefix(bc, e.Prefix) {
					t.Fatalf("%s n=%d entry %d: %+v, want key %x pos %d", p.Name(), n, i, e, keys[i].key, keys[i].pos)
				}
				i++
			}
			if it.Err() != nil || i != n {
				t.Fatalf("%s n=%d: %d entries, err %v", p.Name(), n, i, it.Err())
			}
			for j := 0; j < 300 && j < n; j++ {
				k := keys[rng.Intn(n)]
				got, ok, err := pi.Candidate(k.key)
				if err != nil || !ok || got.Pos != k.pos {
					t.Fatalf("Candidate(%x) = %+v %v %v, want pos %d", k.key, got, ok, err, k.pos)
				}
			}
			// Absent keys: whatever Candidate offers must be another key's
			// entry (the caller's full-key check rejects it).
			for j := 0; j < 300; j++ {
				k := []byte(fmt.Sprintf("absent-%d", j))
				got, ok, err := pi.Candidate(k)
				if err != nil {
					t.Fatal(err)
				}
				if ok && got.Hash != KeyHash(k) {
					t.Fatalf("Candidate(%s) accepted a hash mismatch", k)
				}
			}
			st, err := pi.Stats()
			if err != nil || st.Keys != int64(n) || st.PageCrossing != 0 {
				t.Fatalf("%s n=%d: stats %+v %v", p.Name(), n, st, err)
			}
		}
	}
}

// TestRowsRoundTrip writes Rows.db partitions with two to thousands of
// blocks (row index tries spanning pages), with open deletions, and reads
// every entry and block back; floor lookups of each block's first and
// last clustering land on that block.
func TestRowsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	ty, err := cqltype.Parse("org.apache.cassandra.db.marshal.UTF8Type")
	if err != nil {
		t.Fatal(err)
	}
	types := []*cqltype.Type{ty}
	v, _ := format.ParseFormatVersion(format.BTI, "da")
	var buf bytes.Buffer
	w := NewRowsWriter(&buf, v)
	type written struct {
		pos    int64
		key    []byte
		blocks []IndexBlock
		end    int64
		del    deletiontime.DeletionTime
	}
	var parts []written
	for pi, nb := range []int{2, 3, 17, 500, 5000, 2, 40} {
		// Clusterings: sorted distinct strings, two per block.
		seen := map[string]bool{}
		var cks []string
		for len(cks) < 2*nb {
			s := fmt.Sprintf("%0*d", 1+rng.Intn(6), rng.Intn(1000000))
			if !seen[s] {
				seen[s] = true
				cks = append(cks, s)
			}
		}
		sort.Strings(cks)
		var blocks []IndexBlock
		off := int64(5 + rng.Intn(20))
		for b := 0; b < nb; b++ {
			first, _ := bytecomparable.AppendClustering(nil, types, clustering.Clustering, [][]byte{[]byte(cks[2*b])})
			last, _ := bytecomparable.AppendClustering(nil, types, clustering.Clustering, [][]byte{[]byte(cks[2*b+1])})
			open := deletiontime.Live
			if rng.Intn(5) == 0 {
				open = deletiontime.DeletionTime{MarkedForDeleteAt: rng.Int63n(1 << 50), LocalDeletionTime: rng.Int63n(1 << 31)}
			}
			blocks = append(blocks, IndexBlock{First: first, Last: last, Offset: off, OpenDeletion: open})
			off += 1 + rng.Int63n(1<<uint(rng.Intn(30)))
		}
		key := []byte(fmt.Sprintf("partition-%d", pi))
		del := deletiontime.Live
		if pi%2 == 1 {
			del = deletiontime.DeletionTime{MarkedForDeleteAt: 1234567, LocalDeletionTime: 89}
		}
		pos, err := w.AddPartition(key, int64(pi)*1000, del, blocks, off)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, written{pos, key, blocks, off, del})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	ri := OpenRows(trie.BytesSource(buf.Bytes()), "mem", v)
	for pi, p := range parts {
		e, err := ri.Entry(p.pos)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Key, p.key) || e.DataPos != int64(pi)*1000 || e.BlockCount != len(p.blocks) || e.Deletion != p.del {
			t.Fatalf("partition %d: entry %+v", pi, e)
		}
		if pi+1 < len(parts) && e.End > parts[pi+1].pos {
			t.Fatalf("entry %d ends at %d after the next trie", pi, e.End)
		}
		blocks, end, err := ri.Blocks(e)
		if err != nil {
			t.Fatal(err)
		}
		if end.Offset != p.end || len(blocks) != len(p.blocks) {
			t.Fatalf("partition %d: %d blocks ending %d", pi, len(blocks), end.Offset)
		}
		for j, b := range blocks {
			want := p.blocks[j]
			if b.Offset != want.Offset || b.OpenDeletion != want.OpenDeletion || b.HasOpenMarker == want.OpenDeletion.IsLive() {
				t.Fatalf("partition %d block %d: %+v, want %+v", pi, j, b, want)
			}
			for _, bc := range [][]byte{want.First, want.Last} {
				got, closing, err := ri.Floor(e, bc)
				if err != nil || closing || got.Offset != want.Offset {
					t.Fatalf("partition %d block %d: floor(%x) = %+v %v %v", pi, j, bc, got, closing, err)
				}
			}
		}
		st, err := ri.Stats(e)
		if err != nil || st.Keys != int64(len(p.blocks)+1) || st.PageCrossing != 0 {
			t.Fatalf("partition %d: stats %+v %v", pi, st, err)
		}
	}
}
