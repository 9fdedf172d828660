package merge_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/merge"
)

// shardKey names one counter cell version: the sstable, the partition key
// and clustering as dump prints them, the column.
type shardKey struct {
	src              int
	key, clust, name string
}

// counterShards decodes every counter cell of the sstables with the
// format layer (the dump prints only their totals).
func counterShards(t *testing.T, paths []string) map[shardKey][]cqltype.CounterShard {
	t.Helper()
	out := map[shardKey][]cqltype.CounterShard{}
	for src, p := range paths {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		keyApp := s.KeyType().StringJSONAppender()
		dec := s.Decoder(0)
		var h rows.PartitionHeader
		for {
			if err := dec.ReadPartitionHeader(&h); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			kb, err := keyApp(nil, h.Key)
			if err != nil {
				t.Fatal(err)
			}
			var k string
			json.Unmarshal(kb, &k)
			k = key([]string{k})
			for {
				u, err := dec.Next(false)
				if err != nil {
					t.Fatal(err)
				}
				if u == nil {
					break
				}
				var clust []json.RawMessage
				for i, v := range u.Clustering {
					b, err := s.ClusteringTypes()[i].JSONAppender()(nil, v)
					if err != nil {
						t.Fatal(err)
					}
					clust = append(clust, b)
				}
				cols := s.Schema().Regular
				if u.Kind == rows.KindStaticRow {
					cols = s.Schema().Static
				}
				for _, c := range u.Cells {
					if !cols[c.Column].Counter || c.Flags&rows.CellFlagDeleted != 0 {
						continue
					}
					sh, err := cqltype.CounterShards(c.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[shardKey{src, k, key(clust), cols[c.Column].Name}] = sh
				}
			}
		}
		s.Close()
	}
	return out
}

// mergeShards is CounterContext.merge, by hand: per counter id, a global
// shard beats a local one, which beats a remote one; two globals or two
// remotes keep the higher clock (then count); two locals add up.
func mergeShards(versions [][]cqltype.CounterShard) (total int64, shards map[[16]byte]cqltype.CounterShard) {
	shards = map[[16]byte]cqltype.CounterShard{}
	rank := func(s cqltype.CounterShard) int {
		switch {
		case s.Global:
			return 2
		case s.Local:
			return 1
		}
		return 0
	}
	for _, v := range versions {
		for _, s := range v {
			cur, ok := shards[s.ID]
			switch {
			case !ok || rank(s) > rank(cur):
				shards[s.ID] = s
			case rank(s) < rank(cur):
			case s.Local:
				cur.Clock += s.Clock
				cur.Count += s.Count
				shards[s.ID] = cur
			case s.Clock > cur.Clock || s.Clock == cur.Clock && s.Count > cur.Count:
				shards[s.ID] = s
			}
		}
	}
	for _, s := range shards {
		total += s.Count
	}
	return total, shards
}

// counterReconciler merges counter cells from their decoded shards: a
// tombstone wins whatever the timestamps; else the shards merge and the
// cell takes the newest timestamp.
func counterReconciler(shards map[shardKey][]cqltype.CounterShard) func([]string, []json.RawMessage, []rCell) rCell {
	return func(k []string, clust []json.RawMessage, vs []rCell) rCell {
		var tombs []rCell
		var versions [][]cqltype.CounterShard
		out := rCell{name: vs[0].name, ts: math.MinInt64}
		for _, c := range vs {
			if c.tomb {
				tombs = append(tombs, c)
				continue
			}
			versions = append(versions, shards[shardKey{c.src, key(k), key(clust), c.name}])
			out.ts = max(out.ts, c.ts)
		}
		if len(tombs) > 0 {
			w := tombs[0]
			for _, c := range tombs[1:] {
				if c.ts > w.ts || c.ts == w.ts && c.ldt > w.ldt {
					w = c
				}
			}
			return w
		}
		total, _ := mergeShards(versions)
		out.value = json.RawMessage(strconv.FormatInt(total, 10))
		return out
	}
}

// A generated counter table's history merges by shard.
func TestCounterHistoryMergesByShard(t *testing.T) {
	paths, now := history(t, generate.CounterHistoryProfile, 4, 5, 80)
	shards := counterShards(t, paths)
	kinds := map[string]int{}
	for _, sh := range shards {
		for _, s := range sh {
			switch {
			case s.Global:
				kinds["global"]++
			case s.Local:
				kinds["local"]++
			default:
				kinds["remote"]++
			}
		}
	}
	if kinds["global"] == 0 || kinds["local"] == 0 || kinds["remote"] == 0 {
		t.Fatalf("the history should hold every kind of shard: %v", kinds)
	}
	if n := checkAgainstReference(t, paths, merge.Options{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds}, counterReconciler(shards)); n == 0 {
		t.Fatal("nothing merged")
	}
}

// The counter fixtures (Cassandra's own counter contexts), stacked with
// two generated flushes of updates to the same counters: the fixture's
// counter id with a newer clock, and another node's id. Merged by shard,
// each counter is the new count of the fixture's node plus the other's.
func TestCounterFixturesStackedMergeByShard(t *testing.T) {
	for _, v := range []string{"nb", "nc", "oa"} {
		for _, name := range []string{"clust_counter", "simple_counter"} {
			src := fixtures.Table(t, v, "legacy_"+v+"_"+name)
			dir := filepath.Join(t.TempDir(), "legacy_tables", "legacy_"+v+"_"+name+"-0123456789abcdef0123456789abcdef")
			copyInto(t, src, dir)
			paths := stackCounterUpdates(t, dir, 3)
			shards := counterShards(t, paths)
			if n := checkAgainstReference(t, paths, merge.Options{Now: 1800000000, GCGraceSeconds: merge.DefaultGCGraceSeconds}, counterReconciler(shards)); n == 0 {
				t.Fatalf("%s: nothing merged", dir)
			}
			checkStackedTotals(t, paths)
		}
	}
}

func copyInto(t *testing.T, srcDir, dir string) {
	t.Helper()
	copied := fixtures.CopyTable(t, srcDir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copied, dir); err != nil {
		t.Fatal(err)
	}
}

// stackCounterUpdates writes n-1 sstables after the fixture in dir: in
// sstable g, every other row of every other partition gets an update by
// the fixture's node (its shard with clock + g and count + 10·g) and by
// node "b" (count g).
func stackCounterUpdates(t *testing.T, dir string, n int) []string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(dir, "*-Data.db"))
	if len(found) != 1 {
		t.Fatalf("%s: %v", dir, found)
	}
	base, err := sstable.Open(found[0], sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	paths := []string{found[0]}
	for g := 2; g <= n; g++ {
		w, err := writer.NewSSTableWriter(dir, writer.Config{Version: base.Version(), Generation: strconv.Itoa(g + 10),
			Header: base.Stats().Header, Schema: base.Schema(), Partitioner: base.Partitioner().Name()})
		if err != nil {
			t.Fatal(err)
		}
		pi := 0
		err = base.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
			pi++
			if pi%2 == g%2 {
				return nil
			}
			if err := w.StartPartition(h.Key, h.Deletion); err != nil {
				return err
			}
			ri := 0
			for {
				u, err := dec.Next(false)
				if err != nil || u == nil {
					if err == nil {
						err = w.EndPartition()
					}
					return err
				}
				ri++
				if ri%2 == 0 || len(u.Cells) != 1 {
					continue
				}
				sh, err := cqltype.CounterShards(u.Cells[0].Value)
				if err != nil {
					return err
				}
				up := &rows.Unfiltered{Kind: u.Kind, Clustering: u.Clustering, Deletion: deletiontime.Live,
					Cells: []rows.Cell{{Column: 0, Timestamp: u.Cells[0].Timestamp + int64(g), Value: counterContext(sh[0].ID, sh[0].Clock+int64(g), sh[0].Count+10*int64(g), g)}}}
				if u.Kind == rows.KindStaticRow {
					err = w.AddStatic(up)
				} else {
					err = w.Add(up)
				}
				if err != nil {
					return err
				}
			}
		})
		if err != nil {
			w.Abort()
			t.Fatal(err)
		}
		p, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// counterContext is a context of two global shards: id's, and node b's.
func counterContext(id [16]byte, clock, count int64, g int) []byte {
	other := [16]byte{0xb0, 0xb0, 15: 0xbb}
	type shard struct {
		id           [16]byte
		clock, count int64
	}
	ss := []shard{{id, clock, count}, {other, int64(g), int64(g)}}
	slices.SortFunc(ss, func(a, b shard) int { return bytes.Compare(a.id[:], b.id[:]) })
	b := binary.BigEndian.AppendUint16(nil, 2)
	for i := 0; i < 2; i++ { // both global: index + Short.MIN_VALUE
		b = binary.BigEndian.AppendUint16(b, uint16(int16(i-32768)))
	}
	for _, s := range ss {
		b = append(b, s.id[:]...)
		b = binary.BigEndian.AppendUint64(b, uint64(s.clock))
		b = binary.BigEndian.AppendUint64(b, uint64(s.count))
	}
	return b
}

// checkStackedTotals checks the merged totals themselves: the last
// sstable that updated a counter decides it (its clocks are the newest),
// the fixture's count where none did.
func checkStackedTotals(t *testing.T, paths []string) {
	t.Helper()
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	sc, err := tbl.Scan(merge.Options{Now: 1800000000})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int64]int{}
	for {
		p, err := sc.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			break
		}
		for {
			u, err := p.Next()
			if err != nil {
				t.Fatal(err)
			}
			if u == nil {
				break
			}
			for i, c := range u.Cells {
				total, err := cqltype.CounterTotal(c.Value)
				if err != nil {
					t.Fatal(err)
				}
				counts[total]++
				src := p.Provenance().Cells[i]
				switch total {
				case 1: // the fixture's, untouched
					if src != 0 {
						t.Errorf("an untouched counter comes from sstable %d", src)
					}
				case 1 + 10*2 + 2, 1 + 10*3 + 3: // the latest update's (own count, then b's)
				default:
					t.Errorf("merged counter total %d (shards %v)", total, fmt.Sprint(mustShards(t, c.Value)))
				}
			}
		}
	}
	if counts[23] == 0 || counts[34] == 0 {
		t.Errorf("totals %v: want counters updated by each sstable", counts)
	}
}

func mustShards(t *testing.T, v []byte) []cqltype.CounterShard {
	s, err := cqltype.CounterShards(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
