package bti

import (
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
)

// AddUnfiltered feeds one unfiltered decoded from Data.db to the cutter:
// its clustering's byte-comparable form (appended to dst, which is
// returned, so a caller can keep one buffer per partition), its offsets
// from the partition start at partStart, and for a range tombstone marker
// the deletion it leaves open (a start bound's, a boundary's start, none
// after an end bound). Static rows are not indexed and are skipped.
func (c *BlockCutter) AddUnfiltered(dst []byte, types []*cqltype.Type, partStart int64, u *rows.Unfiltered) ([]byte, error) {
	return c.addUnfiltered(dst, types, u, u.Offset-partStart, u.Offset+u.Size-partStart, false)
}

// AddUnfilteredAt is AddUnfiltered for an unfiltered that is not (or not
// yet) where u.Offset says: a converter decodes the source and feeds the
// positions its output gives the same unfiltered, start and end from the
// start of the output partition. scratch is only used for this call and
// returned for reuse; the cutter copies what it keeps (AddCopy).
func (c *BlockCutter) AddUnfilteredAt(scratch []byte, types []*cqltype.Type, u *rows.Unfiltered, start, end int64) ([]byte, error) {
	return c.addUnfiltered(scratch[:0], types, u, start, end, true)
}

func (c *BlockCutter) addUnfiltered(dst []byte, types []*cqltype.Type, u *rows.Unfiltered, startRel, endRel int64, copying bool) ([]byte, error) {
	if u.Kind == rows.KindStaticRow {
		return dst, nil
	}
	kind, vals := clustering.Clustering, u.Clustering
	open := deletiontime.Live
	marker := u.Kind == rows.KindMarker
	if marker {
		kind, vals = u.Bound.Kind, u.Bound.Values
		switch {
		case kind.IsBoundary():
			open = u.StartDeletion
		case kind.IsStart():
			open = u.Deletion
		}
	}
	start := len(dst)
	dst, err := bytecomparable.AppendClustering(dst, types, kind, vals)
	if err != nil {
		return dst[:start], err
	}
	if copying {
		return dst, c.AddCopy(dst[start:], startRel, endRel, marker, open)
	}
	// The cutter keeps bc until Finish: cap it so later appends to dst
	// cannot overwrite it.
	bc := dst[start:len(dst):len(dst)]
	return dst, c.Add(bc, startRel, endRel, marker, open)
}
