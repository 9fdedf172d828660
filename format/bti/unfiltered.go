package bti

import (
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/bytecomparable"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// AddUnfiltered feeds one unfiltered decoded from Data.db to the cutter:
// its clustering's byte-comparable form (appended to dst, which is
// returned, so a caller can keep one buffer per partition), its offsets
// from the partition start at partStart, and for a range tombstone marker
// the deletion it leaves open (a start bound's, a boundary's start, none
// after an end bound). Static rows are not indexed and are skipped.
func (c *BlockCutter) AddUnfiltered(dst []byte, types []*cqltype.Type, partStart int64, u *rows.Unfiltered) ([]byte, error) {
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
	// The cutter keeps bc until Finish: cap it so later appends to dst
	// cannot overwrite it.
	bc := dst[start:len(dst):len(dst)]
	return dst, c.Add(bc, u.Offset-partStart, u.Offset+u.Size-partStart, marker, open)
}
