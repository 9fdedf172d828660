package testtables

import (
	"encoding/binary"
	"path/filepath"
	"strings"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// DroppedColumnsID is the id of DroppedColumnsNode's table ks.t.
const DroppedColumnsID = "7d1e0c30-0000-4000-8000-000000000001"

// DroppedColumnsNode writes a node's data directory at dataDir whose
// table ks.t (pk text, ck int, v text, PRIMARY KEY (pk, ck)) dropped
// three columns at 2,000,000 µs (2 s after the epoch, a whole
// millisecond as dropped_time keeps it): v, added again since; tags
// set<text>; st text static. Its system_schema says so (Cassandra 4.1's
// layout); two flushes of partition "a" (oa) hold cells from before and
// after the drop:
//
//	flush 1: static st@1,000,000 "s1"; row 1 liveness@1,000,000 and v@1,000,000 "old";
//	         row 2 v@2,000,000 "edge"; row 3 tags deleted@1,499,999 and {"x"}@1,500,000
//	flush 2: static st@3,000,000 "s2"; row 1 v@2,000,001 "new";
//	         row 3 tags deleted@2,499,999 and {"y"}@2,500,000; row 4 v@1,999,999 "late"
//
// By DeserializationHelper.isDropped (a cell at or before the drop is not
// read) and isDroppedComplexDeletion, what Cassandra reads: the static
// row st "s2", row 1 with its liveness and v "new", row 3 with its second
// deletion and "y". A SELECT sees only row 1: st and tags are columns no
// more, and row 3 has nothing else.
func DroppedColumnsNode(dataDir string) error {
	sch, err := cqltype.ParseSchema(`CREATE TABLE ks.t (pk text, ck int, v text, tags set<text>, st text static, PRIMARY KEY (pk, ck));
		ALTER TABLE ks.t DROP v USING TIMESTAMP 2000000;
		ALTER TABLE ks.t ADD v text;
		ALTER TABLE ks.t DROP (tags, st) USING TIMESTAMP 2000000;`)
	if err != nil {
		return err
	}
	sch.Tables[0].ID = DroppedColumnsID
	if err := SystemSchema(dataDir, sch, SystemSchemaOptions{Layout: "4.1", Version: format.MustVersion("nb"), Timestamp: 1_000}); err != nil {
		return err
	}
	const text = "org.apache.cassandra.db.marshal.UTF8Type"
	set := "org.apache.cassandra.db.marshal.SetType(" + text + ")"
	h := &stats.Header{MinTimestamp: 1_000_000, MinLocalDeletionTime: 100, KeyType: stats.TypeName{Class: text},
		ClusteringTypes: []stats.TypeName{{Class: "org.apache.cassandra.db.marshal.Int32Type"}},
		StaticColumns:   []stats.Column{{Name: []byte("st"), Type: stats.TypeName{Class: text}}},
		RegularColumns:  []stats.Column{{Name: []byte("v"), Type: stats.TypeName{Class: text}}, {Name: []byte("tags"), Type: stats.TypeName{Class: set}}}}
	for _, tn := range []*stats.TypeName{&h.KeyType, &h.ClusteringTypes[0], &h.StaticColumns[0].Type, &h.RegularColumns[0].Type, &h.RegularColumns[1].Type} {
		if err := resolveTypeName(tn); err != nil {
			return err
		}
	}
	v := format.MustVersion("oa")
	schema := &rows.Schema{Version: v, ClusteringFixed: []int{4}, MinTimestamp: 1_000_000, MinLocalDeletionTime: 100,
		Static:  []rows.Column{{Name: "st", Type: text, Fixed: -1}},
		Regular: []rows.Column{{Name: "v", Type: text, Fixed: -1}, {Name: "tags", Type: set, Fixed: -1, Complex: true}}}
	static := func(ts int64, s string) *rows.Unfiltered {
		return &rows.Unfiltered{Kind: rows.KindStaticRow, Deletion: deletiontime.Live, Cells: []rows.Cell{{Column: 0, Timestamp: ts, Value: []byte(s)}}}
	}
	row := func(ck uint32, cells ...rows.Cell) *rows.Unfiltered {
		return &rows.Unfiltered{Kind: rows.KindRow, Clustering: [][]byte{binary.BigEndian.AppendUint32(nil, ck)}, Deletion: deletiontime.Live, Cells: cells}
	}
	val := func(ts int64, s string) rows.Cell { return rows.Cell{Column: 0, Timestamp: ts, Value: []byte(s)} }
	tagged := func(ck uint32, deleted, ts int64, tag string) *rows.Unfiltered {
		u := row(ck, rows.Cell{Column: 1, Timestamp: ts, Path: []byte(tag), Value: []byte{}})
		u.ComplexDeletions = []rows.ComplexDeletion{{Column: 1, Deletion: deletiontime.DeletionTime{MarkedForDeleteAt: deleted, LocalDeletionTime: 100}}}
		return u
	}
	live := row(1, val(1_000_000, "old"))
	live.Liveness = rows.Liveness{HasTimestamp: true, Timestamp: 1_000_000}
	flushes := [][]*rows.Unfiltered{
		{static(1_000_000, "s1"), live, row(2, val(2_000_000, "edge")), tagged(3, 1_499_999, 1_500_000, "x")},
		{static(3_000_000, "s2"), row(1, val(2_000_001, "new")), tagged(3, 2_499_999, 2_500_000, "y"), row(4, val(1_999_999, "late"))},
	}
	dir := filepath.Join(dataDir, "ks", "t-"+strings.ReplaceAll(DroppedColumnsID, "-", ""))
	for i, us := range flushes {
		w, err := writer.NewSSTableWriter(dir, writer.Config{Version: v, Generation: string(rune('1' + i)), Header: h, Schema: schema,
			Partitioner: stats.Murmur3Partitioner})
		if err != nil {
			return err
		}
		if err := w.StartPartition([]byte("a"), deletiontime.Live); err != nil {
			w.Abort()
			return err
		}
		if err := w.AddStatic(us[0]); err != nil {
			w.Abort()
			return err
		}
		for _, u := range us[1:] {
			if err := w.Add(u); err != nil {
				w.Abort()
				return err
			}
		}
		if err := w.EndPartition(); err != nil {
			w.Abort()
			return err
		}
		if _, err := w.Finish(); err != nil {
			return err
		}
	}
	return nil
}
