package merge_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/merge"
)

// Two flushes of a table (pk text, seq int, v text): the first writes
// rows 1 and 2, the second overwrites row 1 and deletes row 2. The merge
// keeps the newer value and the deletion, and explains what lost.
func Example() {
	dir, err := os.MkdirTemp("", "merge-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	dir = filepath.Join(dir, "shop", "orders-0123456789abcdef0123456789abcdef")

	// The table's serialization header, and the decoder's view of it.
	text, _ := cqltype.Parse("org.apache.cassandra.db.marshal.UTF8Type")
	integer, _ := cqltype.Parse("org.apache.cassandra.db.marshal.Int32Type")
	header := &stats.Header{MinTimestamp: 1000, MinLocalDeletionTime: 1_700_000_000,
		KeyType: stats.TypeName{Class: text.Class, Type: text}, ClusteringTypes: []stats.TypeName{{Class: integer.Class, Type: integer}},
		RegularColumns: []stats.Column{{Name: []byte("v"), Type: stats.TypeName{Class: text.Class, Type: text}}}}
	schema := &rows.Schema{Version: format.MustVersion("oa"), ClusteringFixed: []int{4}, MinTimestamp: 1000,
		MinLocalDeletionTime: 1_700_000_000, Regular: []rows.Column{{Name: "v", Type: text.Class, Fixed: -1}}}
	row := func(seq byte, ts int64, v string) *rows.Unfiltered {
		u := &rows.Unfiltered{Kind: rows.KindRow, Clustering: [][]byte{{0, 0, 0, seq}}, Deletion: deletiontime.Live,
			Liveness: rows.Liveness{HasTimestamp: true, Timestamp: ts}}
		if v != "" {
			u.Cells = []rows.Cell{{Column: 0, Timestamp: ts, Value: []byte(v)}}
		} else {
			u.Liveness = rows.Liveness{}
			u.Deletion = deletiontime.DeletionTime{MarkedForDeleteAt: ts, LocalDeletionTime: 1_700_000_100}
		}
		return u
	}
	flush := func(gen string, us ...*rows.Unfiltered) string {
		w, err := writer.NewSSTableWriter(dir, writer.Config{Version: schema.Version, Generation: gen, Header: header,
			Schema: schema, Partitioner: stats.Murmur3Partitioner})
		if err != nil {
			panic(err)
		}
		w.StartPartition([]byte("alice"), deletiontime.Live)
		for _, u := range us {
			w.Add(u)
		}
		w.EndPartition()
		path, err := w.Finish()
		if err != nil {
			panic(err)
		}
		return path
	}
	paths := []string{
		flush("1", row(1, 1000, "pending"), row(2, 1000, "pending")),
		flush("2", row(1, 2000, "shipped"), row(2, 2000, "")),
	}

	t, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		panic(err)
	}
	defer t.Close()
	o := merge.Options{Now: 1_700_000_200, GCGraceSeconds: merge.DefaultGCGraceSeconds}
	p, err := t.Get([]byte("alice"), o)
	if err != nil {
		panic(err)
	}
	for {
		u, err := p.Next()
		if err != nil {
			panic(err)
		}
		if u == nil {
			break
		}
		seq := u.Clustering[0][3]
		if u.HasDeletion() {
			fmt.Printf("row %d: deleted at %d (sstable %d)\n", seq, u.Deletion.MarkedForDeleteAt, p.Provenance().Deletion+1)
			continue
		}
		fmt.Printf("row %d: v = %s (sstable %d)\n", seq, u.Cells[0].Value, p.Provenance().Cells[0]+1)
	}

	e, err := t.Explain([]byte("alice"), o)
	if err != nil {
		panic(err)
	}
	for _, en := range e.Entries {
		for _, v := range en.Versions {
			if v.Verdict != merge.Won {
				fmt.Printf("row %d: sstable %d's %s lost: %s\n", en.Clustering[0][3], v.SSTable+1, v.What, v.Verdict)
			}
		}
	}
	// Output:
	// row 1: v = shipped (sstable 2)
	// row 2: deleted at 2000 (sstable 2)
	// row 1: sstable 1's row liveness lost: older timestamp
	// row 1: sstable 1's cell lost: older timestamp
	// row 2: sstable 1's row liveness lost: shadowed by the row deletion
	// row 2: sstable 1's cell lost: shadowed by the row deletion
}
