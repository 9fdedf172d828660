package convert

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// FuzzRelink feeds arbitrary bytes as a legacy (nc) partition to the
// relinker: it must never panic, and whatever it converts must decode in
// oa to the same content as the input decodes in nc.
func FuzzRelink(f *testing.F) {
	nc, oa := format.MustVersion("nc"), format.MustVersion("oa")
	schema := func(v format.Version) *rows.Schema {
		return &rows.Schema{Version: v, ClusteringFixed: []int{4, -1},
			Static:  []rows.Column{{Name: "s", Fixed: -1}},
			Regular: []rows.Column{{Name: "a", Fixed: 8}, {Name: "m", Fixed: -1, Complex: true}}}
	}
	enc := rows.NewEncoder(schema(nc))
	seed, _ := enc.AppendPartitionHeader(nil, []byte("key"), deletiontime.Live)
	st := &rows.Unfiltered{Kind: rows.KindStaticRow, Cells: []rows.Cell{{Column: 0, Timestamp: 5, Value: []byte("x")}}}
	seed, _ = enc.AppendUnfiltered(seed, st, 0)
	first := uint64(len(seed))
	row := &rows.Unfiltered{Kind: rows.KindRow, Clustering: [][]byte{{0, 0, 0, 1}, []byte("c")},
		Liveness: rows.Liveness{HasTimestamp: true, Timestamp: 7}, Deletion: deletiontime.Live,
		Cells: []rows.Cell{{Column: 0, Timestamp: 7, Value: []byte("12345678")}}}
	seed, _ = enc.AppendUnfiltered(seed, row, first)
	seed = rows.AppendEndOfPartition(seed)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		dw, err := writer.NewDataWriter(&out, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		defer dw.Abort()
		rl := &relinker{src: rows.NewBytesSource(in, 0), schema: schema(nc), dst: dw,
			to: oa.DeletionTimeLayout(), file: "fuzz", counts: &Counts{}}
		pr, _, err := rl.partition(nil, nil)
		if err != nil {
			return
		}
		if _, err := dw.Finish(); err != nil {
			t.Fatal(err)
		}
		if pr.newSize != int64(out.Len()) {
			t.Fatalf("partition size %d, wrote %d", pr.newSize, out.Len())
		}
		da := rows.NewDecoder(rows.NewBytesSource(in[:pr.oldSize], 0), schema(nc))
		db := rows.NewDecoder(rows.NewBytesSource(out.Bytes(), 0), schema(oa))
		var ha, hb rows.PartitionHeader
		if err := da.ReadPartitionHeader(&ha); err != nil {
			return // the relinker does not check row bodies; the decoder does
		}
		if err := db.ReadPartitionHeader(&hb); err != nil {
			t.Fatalf("converted header does not decode: %v", err)
		}
		if !bytes.Equal(ha.Key, hb.Key) || ha.Deletion != hb.Deletion {
			t.Fatalf("header changed: %x %+v -> %x %+v", ha.Key, ha.Deletion, hb.Key, hb.Deletion)
		}
		for {
			ua, erra := da.Next(false)
			if erra != nil {
				return // undecodable body: copied verbatim, nothing to compare
			}
			ub, errb := db.Next(false)
			if errb != nil && !errors.Is(errb, io.EOF) {
				t.Fatalf("converted unfiltered does not decode: %v", errb)
			}
			if ua == nil || ub == nil {
				if ua != ub {
					t.Fatal("unfiltered count changed")
				}
				return
			}
			if !SameUnfiltered(ua, ub) {
				t.Fatalf("unfiltered changed:\n%+v\n%+v", ua, ub)
			}
		}
	})
}
