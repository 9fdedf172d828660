// Package bytemap names and colours the raw bytes of a Data.db partition
// or row for the hex view: which byte range is the key, the partition
// DeletionTime, a row's flags, its clustering, its size fields, its
// liveness, each cell's flags, timestamp, path and value.
//
// Where each field sits is not worked out here: format/rows' decoder, in
// layout mode (Decoder.RecordLayout), records the span of every field it
// reads, so the picture is the decoder's own parse. This package only gives
// each kind of span its colour class and words its label from the decoded
// partition header or unfiltered, with the CQL types (tui/cellfmt), as it
// does for the trie files' spans (trie.go).
package bytemap

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
	"github.com/sstabletool/sstabletool/internal/words"
)

// Class groups fields that the hex view colours alike.
type Class uint8

const (
	KeyLength Class = iota
	Key
	PartitionDeletion
	Flags
	Clustering
	Size
	Liveness
	Deletion
	Columns
	CellHeader
	CellPath
	CellValue
	EndOfPartition
	Unlabelled
	numClasses
)

var classNames = [...]string{"key length", "key", "DeletionTime", "flags", "clustering", "size", "liveness",
	"deletion", "columns", "cell header", "cell path", "cell value", "end of partition", "not labelled"}

func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// Classes lists every class in display order (for a legend).
func Classes() []Class {
	out := make([]Class, numClasses)
	for i := range out {
		out[i] = Class(i)
	}
	return out
}

// Span is one labelled field: Len bytes at Data.db offset Off.
type Span struct {
	Off   int64
	Len   int
	Class Class
	// Label names the field and its decoded value in full; Short is a few
	// words for a hex dump line that has several fields.
	Label, Short string
}

// End is the offset just past the span.
func (s Span) End() int64 { return s.Off + int64(s.Len) }

// dataClass is the colour class of each kind of Data.db field.
var dataClass = [...]Class{
	rows.SpanKeyLength:         KeyLength,
	rows.SpanKey:               Key,
	rows.SpanPartitionDeletion: PartitionDeletion,
	rows.SpanFlags:             Flags,
	rows.SpanExtFlags:          Flags,
	rows.SpanBoundKind:         Clustering,
	rows.SpanBoundSize:         Clustering,
	rows.SpanClusteringHeader:  Clustering,
	rows.SpanClusteringLength:  Clustering,
	rows.SpanClusteringValue:   Clustering,
	rows.SpanSize:              Size,
	rows.SpanPrevSize:          Size,
	rows.SpanRowTimestamp:      Liveness,
	rows.SpanRowTTL:            Liveness,
	rows.SpanRowExpiration:     Liveness,
	rows.SpanDeletionTimestamp: Deletion,
	rows.SpanDeletionTime:      Deletion,
	rows.SpanColumnsBitmap:     Columns,
	rows.SpanMissingCount:      Columns,
	rows.SpanPresentColumn:     Columns,
	rows.SpanMissingColumn:     Columns,
	rows.SpanElementCount:      CellHeader,
	rows.SpanCellFlags:         CellHeader,
	rows.SpanCellTimestamp:     CellHeader,
	rows.SpanCellDeletionTime:  CellHeader,
	rows.SpanCellTTL:           CellHeader,
	rows.SpanCellPathLength:    CellHeader,
	rows.SpanCellPath:          CellPath,
	rows.SpanCellValueLength:   CellHeader,
	rows.SpanCellValue:         CellValue,
	rows.SpanEndOfPartition:    EndOfPartition,
}

// dataClassOf is s's colour class (a kind this table does not know yet is
// shown, unlabelled, rather than trusted to an index).
func dataClassOf(k rows.SpanKind) Class {
	if int(k) < len(dataClass) {
		return dataClass[k]
	}
	return Unlabelled
}

// Labeler labels the bytes of one sstable's partitions.
type Labeler struct {
	Schema          *rows.Schema
	KeyType         *cqltype.Type
	ClusteringTypes []*cqltype.Type
	StaticTypes     []*cqltype.Type
	RegularTypes    []*cqltype.Type
	// File names the Data.db file in errors.
	File string
}

// valueRunes bounds the decoded value shown in a label.
const valueRunes = 40

// shortRunes bounds a value in a short label.
const shortRunes = 12

// decoder returns a decoder in layout mode over b, at Data.db offset base.
func (l *Labeler) decoder(b []byte, base int64) *rows.Decoder {
	dec := rows.NewDecoder(rows.NewBytesSource(b, base), l.Schema)
	dec.SetFile(l.File)
	dec.RecordLayout()
	return dec
}

// Header labels a partition header (key length, key, DeletionTime): b
// holds its bytes (and maybe more) starting at Data.db offset base, and h,
// what a decoder read, says where it starts. The bytes are decoded again,
// in layout mode, from there.
func (l *Labeler) Header(b []byte, base int64, h *rows.PartitionHeader) ([]Span, error) {
	if h.Offset < base || h.Offset-base > int64(len(b)) {
		return nil, corrupt.New(l.File, "Data.db", base, fmt.Sprintf("the partition at %d inside the bytes read", h.Offset), io.ErrUnexpectedEOF)
	}
	dec := l.decoder(b[h.Offset-base:], h.Offset)
	var got rows.PartitionHeader
	if err := dec.ReadPartitionHeader(&got); err != nil {
		if err == io.EOF {
			err = corrupt.New(l.File, "Data.db", h.Offset, "a partition header", io.ErrUnexpectedEOF)
		}
		return nil, err
	}
	return l.header(nil, dec.Layout(), &got), nil
}

func (l *Labeler) header(out []Span, spans []rows.Span, h *rows.PartitionHeader) []Span {
	for _, s := range spans {
		var label, short string
		switch s.Kind {
		case rows.SpanKeyLength:
			label, short = fmt.Sprintf("partition key length %d (2 B)", s.Value), fmt.Sprintf("key len %d", s.Value)
		case rows.SpanKey:
			key := keyText(l.KeyType, h.Key)
			label, short = "partition key "+cellfmt.Truncate(key, valueRunes), "key "+cellfmt.Truncate(key, shortRunes)
		default:
			short = fmt.Sprintf("DeletionTime %d B", s.Len)
			if h.Deletion.IsLive() {
				short = fmt.Sprintf("DeletionTime LIVE %d B", s.Len)
			}
			label = deletionLabel(l.Schema.Version.DeletionTimeLayout(), h.Deletion, s.Len)
		}
		out = append(out, Span{Off: s.Off, Len: s.Len, Class: dataClassOf(s.Kind), Label: label, Short: short})
	}
	return out
}

func keyText(t *cqltype.Type, key []byte) string {
	if t != nil && t.Kind != cqltype.Composite {
		return cellfmt.Value(t, key, 0)
	}
	return fmt.Sprintf("0x%x", key)
}

// deletionLabel names a partition DeletionTime with its layout and width:
// 12 bytes legacy (int localDeletionTime, long markedForDeleteAt), or in
// oa's compact layout 1 byte 0x80 for LIVE, else long then unsigned int.
func deletionLabel(l deletiontime.Layout, d deletiontime.DeletionTime, n int) string {
	unit := words.Noun(n, "byte")
	switch {
	case l == deletiontime.Legacy && d.IsLive():
		return fmt.Sprintf("partition DeletionTime LIVE (%d %s, legacy: localDeletionTime 0x7fffffff + markedForDeleteAt Long.MIN_VALUE)", n, unit)
	case d.IsLive():
		return fmt.Sprintf("partition DeletionTime LIVE (%d %s, compact: 0x80)", n, unit)
	}
	return fmt.Sprintf("partition DeletionTime (%d %s, %s): %s", n, unit, l, cellfmt.Deletion(d))
}

// Unfiltered labels one row or range tombstone marker: b holds its bytes
// (and maybe more) starting at Data.db offset base, and u, what a decoder
// returned for it, says where it starts. The bytes are decoded again, in
// layout mode, from there.
func (l *Labeler) Unfiltered(b []byte, base int64, u *rows.Unfiltered) ([]Span, error) {
	if u.Offset < base || u.Offset-base > int64(len(b)) {
		return nil, corrupt.New(l.File, "Data.db", base, fmt.Sprintf("the unfiltered at %d inside the bytes read", u.Offset), io.ErrUnexpectedEOF)
	}
	dec := l.decoder(b[u.Offset-base:], u.Offset)
	dec.EnterPartition()
	got, err := dec.Next(false)
	if err != nil {
		return nil, err
	}
	if got == nil {
		return nil, corrupt.New(l.File, "Data.db", u.Offset, "a row or marker", errors.New("end of partition"))
	}
	return l.unfiltered(nil, dec.Layout(), got), nil
}

// cellText is what the labels of one cell's fields share.
type cellText struct {
	index     int
	name, sn  string // the cell's name, in full and short
	valueType *cqltype.Type
}

// unfiltered labels the fields of u (nil for the end-of-partition byte).
func (l *Labeler) unfiltered(out []Span, spans []rows.Span, u *rows.Unfiltered) []Span {
	if u == nil {
		for _, s := range spans {
			out = append(out, Span{Off: s.Off, Len: s.Len, Class: EndOfPartition, Label: "end of partition 0x01", Short: "end of partition"})
		}
		return out
	}
	sch := l.Schema
	what := "row"
	columns, types := sch.Regular, l.RegularTypes
	values := u.Clustering
	switch u.Kind {
	case rows.KindStaticRow:
		what = "static row"
		columns, types = sch.Static, l.StaticTypes
	case rows.KindMarker:
		what = "marker"
		values = u.Bound.Values
	}
	cell := cellText{index: -1}
	for _, s := range spans {
		var label, short string
		v := s.Value
		switch s.Kind {
		case rows.SpanFlags:
			label, short = fmt.Sprintf("%s flags 0x%02x %s", what, v, cellfmt.RowFlags(byte(v))), what+" flags"
		case rows.SpanExtFlags:
			label, short = fmt.Sprintf("extended flags 0x%02x %s", v, cellfmt.ExtFlags(byte(v))), "ext flags"
		case rows.SpanBoundKind:
			label, short = "bound kind "+u.Bound.Kind.String(), "bound kind"
		case rows.SpanBoundSize:
			label, short = fmt.Sprintf("bound size %d value(s) (2 B)", v), "bound size"
		case rows.SpanClusteringHeader:
			label, short = fmt.Sprintf("clustering header 0x%x (vint: null/empty bits)", v), "ck header"
		case rows.SpanClusteringLength:
			label, short = fmt.Sprintf("clustering %d length %d (vint)", s.Index, v), fmt.Sprintf("ck%d len %d", s.Index, v)
		case rows.SpanClusteringValue:
			var t *cqltype.Type
			if s.Index < len(l.ClusteringTypes) {
				t = l.ClusteringTypes[s.Index]
			}
			i := strconv.Itoa(s.Index)
			label = "clustering " + i + " = " + cellfmt.Value(t, values[s.Index], valueRunes)
			short = "ck" + i + " " + cellfmt.Value(t, values[s.Index], shortRunes)
		case rows.SpanSize:
			label, short = fmt.Sprintf("%s size %d (vint: body + previous-size field)", what, v), fmt.Sprintf("size %d", v)
		case rows.SpanPrevSize:
			label, short = fmt.Sprintf("previous unfiltered size %d (vint)", v), fmt.Sprintf("prev size %d", v)
		case rows.SpanRowTimestamp:
			label, short = "row timestamp "+cellfmt.Micros(u.Liveness.Timestamp)+" (delta vint)", "row ts"
		case rows.SpanRowTTL:
			label, short = fmt.Sprintf("row TTL %ds (delta vint)", u.Liveness.TTL), "row ttl"
		case rows.SpanRowExpiration:
			label, short = "row expires "+cellfmt.Seconds(u.Liveness.LocalExpirationTime)+" (delta vint)", "row expiry"
		case rows.SpanDeletionTimestamp, rows.SpanDeletionTime:
			whose, sw := deletionOwner(s, columns)
			if s.Kind == rows.SpanDeletionTimestamp {
				label, short = fmt.Sprintf("%s markedForDeleteAt %s (delta vint)", whose, cellfmt.Micros(int64(v)+sch.MinTimestamp)), sw+" ts"
			} else {
				label, short = fmt.Sprintf("%s localDeletionTime %s (delta vint)", whose, cellfmt.Seconds(int64(v)+sch.MinLocalDeletionTime)), sw+" ldt"
			}
		case rows.SpanColumnsBitmap:
			label, short = fmt.Sprintf("columns subset: missing bitmap 0x%x (vint)", v), "columns"
		case rows.SpanMissingCount:
			label, short = fmt.Sprintf("columns subset: %d missing of %d (vint)", v, len(columns)), fmt.Sprintf("%d missing", v)
		case rows.SpanPresentColumn:
			label, short = fmt.Sprintf("present column index %d (vint)", v), fmt.Sprintf("col %d", v)
		case rows.SpanMissingColumn:
			label, short = fmt.Sprintf("missing column index %d (vint)", v), fmt.Sprintf("col %d", v)
		case rows.SpanElementCount:
			name := columns[s.Index].Name
			label, short = fmt.Sprintf("%s element count %d (vint)", name, v), fmt.Sprintf("%s count %d", name, v)
		case rows.SpanCellFlags, rows.SpanCellTimestamp, rows.SpanCellDeletionTime, rows.SpanCellTTL,
			rows.SpanCellPathLength, rows.SpanCellPath, rows.SpanCellValueLength, rows.SpanCellValue:
			label, short = l.cellField(s, u, columns, types, &cell)
		default:
			label, short = s.Kind.String(), s.Kind.String()
		}
		out = append(out, Span{Off: s.Off, Len: s.Len, Class: dataClassOf(s.Kind), Label: label, Short: short})
	}
	return out
}

// deletionOwner names whose DeletionTime s is half of, in full and short.
func deletionOwner(s rows.Span, columns []rows.Column) (string, string) {
	switch s.Of {
	case rows.OfScyllaShadowable:
		return "ScyllaDB shadowable row deletion", "shadowable del"
	case rows.OfBound:
		return "bound deletion", "bound del"
	case rows.OfBoundaryEnd:
		return "boundary end deletion", "end del"
	case rows.OfBoundaryStart:
		return "boundary start deletion", "start del"
	case rows.OfComplex:
		name := columns[s.Index].Name
		return name + " complex deletion", name + " del"
	}
	return "row deletion", "row del"
}

// cellField labels a field of cell s.Index of u; c caches the cell's name
// across its fields.
func (l *Labeler) cellField(s rows.Span, u *rows.Unfiltered, columns []rows.Column, types []*cqltype.Type, c *cellText) (string, string) {
	cell := &u.Cells[s.Index]
	if c.index != s.Index {
		var t *cqltype.Type
		if cell.Column < len(types) {
			t = types[cell.Column]
		}
		c.index = s.Index
		c.name, c.valueType = cellfmt.CellName(&columns[cell.Column], t, cell.Path)
		c.sn = cellfmt.Truncate(c.name, shortRunes)
	}
	name, sn, v := c.name, c.sn, s.Value
	switch s.Kind {
	case rows.SpanCellFlags:
		return fmt.Sprintf("cell %s flags 0x%02x %s", name, v, cellfmt.CellFlags(byte(v))), sn + " flags"
	case rows.SpanCellTimestamp:
		return "cell " + name + " timestamp " + cellfmt.Micros(cell.Timestamp) + " (delta vint)", sn + " ts"
	case rows.SpanCellDeletionTime:
		return "cell " + name + " local deletion time " + cellfmt.Seconds(cell.LocalDeletionTime) + " (delta vint)", sn + " ldt"
	case rows.SpanCellTTL:
		return fmt.Sprintf("cell %s TTL %ds (delta vint)", name, cell.TTL), sn + " ttl"
	case rows.SpanCellPathLength:
		return fmt.Sprintf("cell %s path length %d (vint)", name, v), fmt.Sprintf("path len %d", v)
	case rows.SpanCellPath:
		return "cell path " + name, "path " + sn
	case rows.SpanCellValueLength:
		return fmt.Sprintf("cell %s value length %d (vint)", name, v), fmt.Sprintf("%s len %d", sn, v)
	}
	vt := c.valueType
	val := cellfmt.Value(vt, cell.Value, valueRunes)
	short := sn + " " + cellfmt.Value(vt, cell.Value, shortRunes)
	if cell.IsTombstone() {
		val = "(tombstone) " + val
	}
	if columns[cell.Column].Counter {
		val = "counter total " + val
		short = sn + " counter " + cellfmt.Value(vt, cell.Value, shortRunes)
	}
	return "cell " + name + " value " + val, short
}

// Region labels every partition, row and marker that starts in b (Data.db
// bytes from offset base), decoding them with format/rows in layout mode.
// A partition cut off by the end of b is labelled up to its last whole
// unfiltered and the rest is one Unlabelled span; decoding errors are
// returned with the spans labelled so far.
func (l *Labeler) Region(b []byte, base int64) ([]Span, error) {
	dec := l.decoder(b, base)
	var out []Span
	var h rows.PartitionHeader
	for {
		err := dec.ReadPartitionHeader(&h)
		if err == io.EOF { // the decoder's clean end, never wrapped
			return out, nil
		}
		if err != nil {
			return rest(out, b, base, err)
		}
		out = l.header(out, dec.Layout(), &h)
		for {
			u, err := dec.Next(false)
			if err != nil {
				return rest(out, b, base, err)
			}
			out = l.unfiltered(out, dec.Layout(), u)
			if u == nil {
				break
			}
		}
	}
}

// rest ends a region: bytes cut off by the end of the buffer are marked as
// not shown; a real decoding error is returned, naming the file.
func rest(out []Span, b []byte, base int64, err error) ([]Span, error) {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		pos := base
		if n := len(out); n > 0 {
			pos = out[n-1].End()
		}
		if end := base + int64(len(b)); pos < end {
			out = append(out, Span{Off: pos, Len: int(end - pos), Class: Unlabelled,
				Label: "rest of the partition (beyond the bytes shown)", Short: "not shown"})
		}
		return out, nil
	}
	return out, err
}

// Find returns the index of the span covering offset off, or -1.
func Find(spans []Span, off int64) int {
	lo, hi := 0, len(spans)
	for lo < hi {
		m := (lo + hi) / 2
		if spans[m].End() <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(spans) && spans[lo].Off <= off {
		return lo
	}
	return -1
}
