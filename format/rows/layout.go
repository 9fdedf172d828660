package rows

import (
	"strconv"

	"github.com/sstabletool/sstabletool/format/clustering"
)

// SpanKind says what a range of Data.db bytes holds, in the decoder's
// layout mode (RecordLayout).
type SpanKind uint8

const (
	SpanKeyLength         SpanKind = iota // the partition key's 2-byte length; Value the length
	SpanKey                               // the partition key
	SpanPartitionDeletion                 // the partition's DeletionTime, in the version's layout
	SpanFlags                             // an unfiltered's flags; Value the byte
	SpanExtFlags                          // its extended flags; Value the byte
	SpanBoundKind                         // a marker's bound kind byte; Value the kind
	SpanBoundSize                         // a marker's 2-byte value count; Value the count
	SpanClusteringHeader                  // a block's vint of null and empty bits; Value the bits, Index the block's first value
	SpanClusteringLength                  // a clustering value's length vint; Value the length, Index the value
	SpanClusteringValue                   // a clustering value; Index the value
	SpanSize                              // the size vint (previous-size field and body); Value the size
	SpanPrevSize                          // the previous unfiltered's size; Value the size
	SpanRowTimestamp                      // the row's liveness timestamp (delta vint)
	SpanRowTTL                            // the row's TTL (delta vint)
	SpanRowExpiration                     // the row's local expiration time (delta vint)
	SpanDeletionTimestamp                 // a DeletionTime's markedForDeleteAt (delta vint); Of whose, Value the delta
	SpanDeletionTime                      // a DeletionTime's localDeletionTime (delta vint); Of whose, Value the delta
	SpanColumnsBitmap                     // the columns subset of fewer than 64 columns: missing bitmap; Value the bits
	SpanMissingCount                      // the columns subset of 64 or more: how many are missing; Value the count
	SpanPresentColumn                     // a large subset's present column index; Value the index
	SpanMissingColumn                     // a large subset's missing column index; Value the index
	SpanElementCount                      // a complex column's cell count; Index the column, Value the count
	SpanCellFlags                         // a cell's flags; Index the cell (Unfiltered.Cells), Value the byte
	SpanCellTimestamp                     // a cell's timestamp (delta vint); Index the cell
	SpanCellDeletionTime                  // a cell's local deletion time (delta vint); Index the cell
	SpanCellTTL                           // a cell's TTL (delta vint); Index the cell
	SpanCellPathLength                    // a complex cell's path length; Index the cell, Value the length
	SpanCellPath                          // a complex cell's path; Index the cell
	SpanCellValueLength                   // a cell value's length vint; Index the cell, Value the length
	SpanCellValue                         // a cell's value; Index the cell
	SpanEndOfPartition                    // the end-of-partition byte
	numSpanKinds
)

var spanKindNames = [numSpanKinds]string{"key length", "key", "partition deletion", "flags", "extended flags",
	"bound kind", "bound size", "clustering header", "clustering length", "clustering value", "size",
	"previous size", "row timestamp", "row TTL", "row expiration", "markedForDeleteAt", "localDeletionTime",
	"columns bitmap", "missing column count", "present column", "missing column", "element count",
	"cell flags", "cell timestamp", "cell local deletion time", "cell TTL", "cell path length", "cell path",
	"cell value length", "cell value", "end of partition"}

func (k SpanKind) String() string {
	if k < numSpanKinds {
		return spanKindNames[k]
	}
	return "SpanKind(" + strconv.Itoa(int(k)) + ")"
}

// DeletionOf says whose DeletionTime a SpanDeletionTimestamp or
// SpanDeletionTime belongs to.
type DeletionOf uint8

const (
	OfRow              DeletionOf = iota // the row deletion
	OfScyllaShadowable                   // ScyllaDB's shadowable row deletion (ExtFlagScyllaShadowable)
	OfBound                              // a bound marker's deletion
	OfBoundaryEnd                        // the deletion a boundary closes
	OfBoundaryStart                      // the deletion a boundary opens
	OfComplex                            // a complex column's deletion; Span.Index is the column
)

// Span is one field of Data.db: Len bytes at offset Off. Index and Value
// say which clustering value, cell or column it belongs to and what it
// stores, as each SpanKind documents; the decoded values themselves are
// in the PartitionHeader or Unfiltered the decoder returned with it.
type Span struct {
	Off   int64
	Len   int
	Kind  SpanKind
	Of    DeletionOf
	Index int
	Value uint64
}

// End is the offset just past the span.
func (s Span) End() int64 { return s.Off + int64(s.Len) }

// layout records spans in layout mode; the decoder's d.lay is nil
// otherwise, and every recording site is behind that one test.
type layout struct {
	spans []Span
	// parts receives the clustering decoder's parts (Decoder.parts points
	// here); every parse attempt starts with it empty.
	parts []clustering.Part
	base  int64 // Data.db offset of the body being decoded
}

// RecordLayout puts the decoder in layout mode: every ReadPartitionHeader
// and Next(false) records where each field of what it read sits, which
// Layout returns, so a hex view labels bytes with the decoder's own parse.
// The decoder then takes its general path only (no fast row loops);
// Next(true) records no layout.
//
// Out of layout mode this costs the decoder one nil test per unfiltered
// that its general path decodes whole (none on size-only steps, none in the
// fast row loop) and one per field of the rare bodies the fast body decoder
// leaves to the general one.
func (d *Decoder) RecordLayout() {
	d.lay = &layout{}
	d.parts = &d.lay.parts
	d.slowOnly = true
}

// retry readies the layout for another attempt at the same unfiltered
// (the first ran out of bytes or failed): the parts it recorded go.
func (d *Decoder) retry() {
	if d.lay != nil {
		d.lay.parts = d.lay.parts[:0]
	}
}

// Layout returns the fields of the partition header, unfiltered or
// end-of-partition byte that the last ReadPartitionHeader or Next read, in
// order and covering every byte of it; nil outside layout mode. The slice
// is reused by the next call.
func (d *Decoder) Layout() []Span {
	if d.lay == nil {
		return nil
	}
	return d.lay.spans
}

func (l *layout) add(off int64, n int, k SpanKind, index int, v uint64) {
	if n > 0 {
		l.spans = append(l.spans, Span{Off: off, Len: n, Kind: k, Index: index, Value: v})
	}
}

// header records a partition header of a klen-byte key whose DeletionTime
// takes dtLen bytes.
func (l *layout) header(off int64, klen, dtLen int) {
	l.spans, l.parts = l.spans[:0], l.parts[:0]
	l.add(off, 2, SpanKeyLength, 0, uint64(klen))
	l.add(off+2, klen, SpanKey, 0, 0)
	l.add(off+2+int64(klen), dtLen, SpanPartitionDeletion, 0, 0)
}

// frame starts the record of an unfiltered with its frame, which
// scanFrame read into u; l.parts holds the parts of its clustering or
// bound, if it has one, which frame consumes.
func (l *layout) frame(u *Unfiltered, sizeAt, prevAt, bodyAt int) {
	l.spans = l.spans[:0]
	off := u.Offset
	l.add(off, 1, SpanFlags, 0, uint64(u.Flags))
	p := int64(1)
	if u.Flags&FlagExtension != 0 {
		l.add(off+1, 1, SpanExtFlags, 0, uint64(u.ExtFlags))
		p = 2
	}
	for _, pt := range l.parts {
		k := SpanClusteringValue
		switch pt.Kind {
		case clustering.PartBoundKind:
			k = SpanBoundKind
		case clustering.PartBoundSize:
			k = SpanBoundSize
		case clustering.PartHeader:
			k = SpanClusteringHeader
		case clustering.PartLength:
			k = SpanClusteringLength
		}
		l.add(off+p+int64(pt.Off), pt.Len, k, pt.Index, pt.Value)
	}
	l.parts = l.parts[:0]
	// The size vint counts the previous-size vint and the body.
	l.add(off+int64(sizeAt), prevAt-sizeAt, SpanSize, 0, uint64(u.Size)-uint64(prevAt))
	l.add(off+int64(prevAt), bodyAt-prevAt, SpanPrevSize, 0, u.PrevSize)
	l.base = off + int64(bodyAt)
}

// end records the end-of-partition byte at off.
func (l *layout) end(off int64) {
	l.spans, l.parts = l.spans[:0], l.parts[:0]
	l.add(off, 1, SpanEndOfPartition, 0, 0)
}

// EnterPartition makes the decoder read unfiltereds from the source's
// position as those of a partition whose header was read elsewhere: for a
// row or marker found by its offset (the hex view of one row).
func (d *Decoder) EnterPartition() {
	d.Reset()
	d.inPartition = true
	d.partStart = d.src.Pos()
	d.prevStart = d.partStart
}
