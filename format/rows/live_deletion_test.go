package rows_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// A row with one collection deleted writes a deletion for each of its
// collections, LIVE for the others, as UnfilteredSerializer does: its
// local deletion time is Integer.MAX_VALUE for the versions 3.x/4.x write
// and 5.0's Long.MAX_VALUE cast to an int (negative, sign-extended) for
// nc and oa. Either decodes back to LIVE, with no time anomaly to report.
func TestLiveComplexDeletionRoundTrip(t *testing.T) {
	const minLDT, minTS = 1_704_067_200, 1_704_067_200_000_000
	for _, v := range []string{"nb", "nc", "oa"} {
		sch := &rows.Schema{Version: mustV(v), ClusteringFixed: []int{4}, MinTimestamp: minTS, MinLocalDeletionTime: minLDT,
			Regular: []rows.Column{{Name: "a", Type: "SetType(Int32Type)", Fixed: -1, Complex: true}, {Name: "b", Type: "SetType(Int32Type)", Fixed: -1, Complex: true}}}
		del := deletiontime.DeletionTime{MarkedForDeleteAt: minTS + 10, LocalDeletionTime: minLDT + 1}
		u := &rows.Unfiltered{Kind: rows.KindRow, Clustering: [][]byte{{0, 0, 0, 1}},
			Cells:            []rows.Cell{{Column: 0, Timestamp: minTS + 20, Path: []byte{0, 0, 0, 7}, Value: []byte{}}},
			ComplexDeletions: []rows.ComplexDeletion{{Column: 1, Deletion: del}}}
		enc := rows.NewEncoder(sch)
		head, err := enc.AppendPartitionHeader(nil, []byte{1}, deletiontime.Live)
		if err != nil {
			t.Fatal(err)
		}
		b, err := enc.AppendUnfiltered(nil, u, uint64(len(head)))
		if err != nil {
			t.Fatal(err)
		}
		// Column a's LIVE deletion follows the row's flags, clustering and
		// sizes: markedForDeleteAt's delta (Long.MIN_VALUE - min), then the
		// local deletion time's.
		liveLDT := int64(math.MaxInt32)
		if v != "nb" {
			liveLDT = math.MaxInt64
		}
		mfda := int64(math.MinInt64)
		want := vint.AppendUnsigned(nil, uint64(mfda-minTS))
		want = vint.AppendUnsigned(want, uint64(int64(int32(liveLDT-minLDT))))
		if !bytes.Contains(b, want) {
			t.Errorf("%s: %x does not hold LIVE as %x", v, b, want)
		}
		b = append(append(head, b...), rows.FlagEndOfPartition)
		d := rows.NewDecoder(rows.NewBytesSource(b, 0), sch)
		d.CollectTimeAnomalies()
		var h rows.PartitionHeader
		if err := d.ReadPartitionHeader(&h); err != nil {
			t.Fatal(err)
		}
		got, err := d.Next(false)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if len(got.ComplexDeletions) != 1 || got.ComplexDeletions[0] != u.ComplexDeletions[0] {
			t.Errorf("%s: complex deletions %+v", v, got.ComplexDeletions)
		}
		if a := d.TakeTimeAnomalies(); len(a) != 0 {
			t.Errorf("%s: anomalies %+v", v, a)
		}
	}
}
