package convert

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/verify"
)

// verifyOutput checks the staged output: verify.SSTable (every checksum and
// the structure) must pass and the content must equal the source's.
func verifyOutput(src *sstable.SSTable, stagedData string, o Options, res *Result) error {
	// verify.SSTable and the two halves of the comparison read
	// independently; three goroutines keep both cores busy to the end.
	repc := make(chan *verify.Report, 1)
	go func() { repc <- verify.SSTableChecksumsAndStructure(stagedData, sstable.Options{Access: o.Access}) }()
	cmpErr := compareWith(src, stagedData, o, res.cut)
	return checkWritten("converted "+src.Path(format.ComponentData), <-repc, cmpErr, res)
}

// compareWith compares src with the staged output in two halves at once,
// split at cut (a partition boundary the rewrite recorded near the middle);
// a zero cut compares in one pass. The cut is only a hint: the first half
// must reach it in both sstables after exactly cut.n whole partitions, so a
// wrong cut fails the comparison and never skips content.
func compareWith(src *sstable.SSTable, stagedData string, o Options, cut boundary) error {
	out, err := sstable.Open(stagedData, sstable.Options{Access: o.Access})
	if err != nil {
		return fmt.Errorf("reopening the output: %w", err)
	}
	defer out.Close()
	// With --cap-deletion-times a partition deletion the output layout
	// cannot hold was capped on purpose: compare it capped.
	var capTo *deletiontime.Layout
	if o.CapDeletionTimes {
		l := out.Version().DeletionTimeLayout()
		capTo = &l
	}
	if cut.n == 0 {
		return sameContentBetween(src, out, boundary{}, nil, capTo)
	}
	// Data and its decompressors are safe for concurrent use; each half
	// has its own cursors.
	second := make(chan error, 1)
	go func() { second <- sameContentBetween(src, out, cut, nil, capTo) }()
	err = sameContentBetween(src, out, boundary{}, &cut, capTo)
	if err2 := <-second; err == nil {
		err = err2
	}
	return err
}

// boundary is the start of the same partition in two sstables: its
// Data.db position in each and the number of partitions before it.
type boundary struct{ a, b, n int64 }

// SameContent decodes both sstables completely and reports the first
// difference in content: partition keys and deletions, rows, markers,
// liveness, deletions and every cell. Positions and the size fields that a
// conversion legitimately changes are not content.
func SameContent(a, b *sstable.SSTable) error {
	return sameContentBetween(a, b, boundary{}, nil, nil)
}

// sameContentBetween compares the partitions from one boundary to the next
// (nil: to the end of both). Reaching to is checked, not assumed: after
// to.n partitions both decoders must stand exactly at to's positions.
// capTo, when set, is the layout a's partition deletions were capped to
// (deletiontime.Cap).
func sameContentBetween(a, b *sstable.SSTable, from boundary, to *boundary, capTo *deletiontime.Layout) error {
	da, db := a.Decoder(from.a), b.Decoder(from.b)
	var ha, hb rows.PartitionHeader
	for n := from.n; ; n++ {
		if to != nil && n == to.n {
			pa, pb := da.Source().Pos(), db.Source().Pos()
			if pa != to.a || pb != to.b {
				return fmt.Errorf("partition %d starts at byte %d of the source and %d of the output, expected %d and %d", n, pa, pb, to.a, to.b)
			}
			return nil
		}
		ea := da.ReadPartitionHeader(&ha)
		eb := db.ReadPartitionHeader(&hb)
		if errors.Is(ea, io.EOF) && errors.Is(eb, io.EOF) {
			if to != nil {
				return fmt.Errorf("both sstables end after %d partitions, before partition %d", n, to.n)
			}
			return nil
		}
		if ea != nil && !errors.Is(ea, io.EOF) {
			return ea
		}
		if eb != nil && !errors.Is(eb, io.EOF) {
			return eb
		}
		if ea != nil || eb != nil {
			return fmt.Errorf("partition %d: one sstable ends before the other", n)
		}
		want := ha.Deletion
		if capTo != nil {
			want, _ = deletiontime.Cap(want, *capTo)
		}
		if !bytes.Equal(ha.Key, hb.Key) || want != hb.Deletion {
			return fmt.Errorf("partition %d: header differs: key %x deletion %+v vs key %x deletion %+v", n, ha.Key, ha.Deletion, hb.Key, hb.Deletion)
		}
		for i := 0; ; i++ {
			ua, err := da.Next(false)
			if err != nil {
				return err
			}
			ub, err := db.Next(false)
			if err != nil {
				return err
			}
			if ua == nil || ub == nil {
				if ua != ub {
					return fmt.Errorf("partition %x: one has more unfiltereds than the other after %d", ha.Key, i)
				}
				break
			}
			if !SameUnfiltered(ua, ub) {
				return fmt.Errorf("partition %x, unfiltered %d (source byte %d) differs:\n%s",
					ha.Key, i, ua.Offset, DescribeDiff(ua, ub))
			}
		}
	}
}

// DescribeDiff names the fields of two unfiltereds that differ (positions
// and sizes, which a conversion changes, left out), for the error message
// of a failed verification (a is the source's, b the output's).
func DescribeDiff(a, b *rows.Unfiltered) string {
	var out strings.Builder
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < va.NumField(); i++ {
		name := va.Type().Field(i).Name
		switch name {
		case "Offset", "Size", "PrevSize":
			continue
		}
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if !reflect.DeepEqual(x, y) {
			fmt.Fprintf(&out, "  %s: source %+v, output %+v\n", name, x, y)
		}
	}
	return out.String()
}

// SameUnfiltered reports whether two unfiltereds hold the same content:
// kind, flags, liveness, deletions, clustering or bound and every cell
// (positions and sizes, which a rewrite changes, are not content). The
// rewrites of an sstable (convert, split, filter) verify their output
// with it. It compares by hand: it runs once per row of every rewritten
// sstable, where reflection would dominate the cost.
func SameUnfiltered(a, b *rows.Unfiltered) bool {
	// The deletion flags are compared as content by sameRowDeletion.
	const delFlags = rows.FlagHasDeletion | rows.FlagExtension
	const delExt = rows.ExtFlagShadowableDel | rows.ExtFlagScyllaShadowable
	if a.Kind != b.Kind || a.Flags&^delFlags != b.Flags&^delFlags || a.ExtFlags&^delExt != b.ExtFlags&^delExt || a.Liveness != b.Liveness ||
		!sameRowDeletion(a, b) || a.EndDeletion != b.EndDeletion ||
		a.StartDeletion != b.StartDeletion || a.ColumnsPresent != b.ColumnsPresent ||
		a.Bound.Kind != b.Bound.Kind || !sameValues(a.Clustering, b.Clustering) || !sameValues(a.Bound.Values, b.Bound.Values) ||
		len(a.Cells) != len(b.Cells) || len(a.ComplexDeletions) != len(b.ComplexDeletions) {
		return false
	}
	for i := range a.Cells {
		ca, cb := &a.Cells[i], &b.Cells[i]
		if ca.Column != cb.Column || ca.Flags != cb.Flags || ca.Timestamp != cb.Timestamp || ca.LocalDeletionTime != cb.LocalDeletionTime ||
			ca.TTL != cb.TTL || !sameBytes(ca.Path, cb.Path) || !sameBytes(ca.Value, cb.Value) {
			return false
		}
	}
	for i := range a.ComplexDeletions {
		if a.ComplexDeletions[i] != b.ComplexDeletions[i] {
			return false
		}
	}
	return true
}

// sameRowDeletion compares row deletions. ScyllaDB's own shadowable
// deletion (extended flag 0x80) is written as Cassandra's shadowable one
// (0x02) by a conversion, so the two spellings are the same content.
func sameRowDeletion(a, b *rows.Unfiltered) bool {
	norm := func(u *rows.Unfiltered) (deletiontime.DeletionTime, bool) {
		if u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 && !u.HasDeletion() {
			return u.ScyllaShadowable, true
		}
		return u.Deletion, u.Shadowable
	}
	da, sa := norm(a)
	db, sb := norm(b)
	return da == db && sa == sb
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func sameValues(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameBytes(a[i], b[i]) {
			return false
		}
	}
	return true
}
