// Package bytemap labels the raw bytes of a Data.db partition or row: which
// byte range is the key, the partition DeletionTime, a row's flags, its
// clustering, its size fields, its liveness, each cell's flags, timestamp,
// path and value. The hex view colours and names bytes from these spans.
//
// Decoding stays with format/rows: the labeller is handed the decoder's
// output (the partition header and each Unfiltered with its offset, size,
// flags and cells) and only measures where each field sits, reading vint
// widths with format/vint and clustering headers with the layout of
// db/ClusteringPrefix.java. Field order follows
// db/rows/UnfilteredSerializer.java (flags, extended flags, clustering or
// bound, size, previous size, liveness, deletion, columns subset, cells),
// db/rows/Cell.java (flags, timestamp, local deletion time, TTL, path,
// value) and db/Columns.java (subset encodings). A walk that does not end
// exactly where the decoder said the unfiltered ends is reported as an
// error instead of a wrong picture.
package bytemap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/vint"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
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

// walker measures fields over b, whose first byte is at Data.db offset base.
type walker struct {
	l     *Labeler
	b     []byte
	base  int64
	pos   int
	spans []Span
}

func (w *walker) corrupt(expected string, err error) error {
	return corrupt.New(w.l.File, "Data.db", w.base+int64(w.pos), expected, err)
}

// take labels the next n bytes.
func (w *walker) take(n int, c Class, label, short string) error {
	if n < 0 || n > len(w.b)-w.pos {
		return w.corrupt(fmt.Sprintf("%s: %d bytes", label, n), io.ErrUnexpectedEOF)
	}
	if n > 0 {
		w.spans = append(w.spans, Span{Off: w.base + int64(w.pos), Len: n, Class: c, Label: label, Short: short})
	}
	w.pos += n
	return nil
}

// vint labels the unsigned vint at the current position and returns it;
// label gets the decoded value.
func (w *walker) vint(c Class, label func(v uint64) (string, string)) (uint64, error) {
	v, n, err := vint.Unsigned(w.b[w.pos:])
	if err != nil {
		return 0, w.corrupt("an unsigned vint", err)
	}
	l, short := label(v)
	return v, w.take(n, c, l, short)
}

func (w *walker) byte1() (byte, error) {
	if w.pos >= len(w.b) {
		return 0, w.corrupt("one byte", io.ErrUnexpectedEOF)
	}
	return w.b[w.pos], nil
}

// Header labels a partition header (key length, key, DeletionTime) that
// starts at b[0], Data.db offset base, as the decoder read it into h.
func (l *Labeler) Header(b []byte, base int64, h *rows.PartitionHeader) ([]Span, error) {
	w := &walker{l: l, b: b, base: base}
	if err := w.header(h); err != nil {
		return w.spans, err
	}
	return w.spans, nil
}

func (w *walker) header(h *rows.PartitionHeader) error {
	if len(w.b)-w.pos < 2 {
		return w.corrupt("a 2-byte partition key length", io.ErrUnexpectedEOF)
	}
	klen := int(binary.BigEndian.Uint16(w.b[w.pos:]))
	if err := w.take(2, KeyLength, fmt.Sprintf("partition key length %d (2 B)", klen), fmt.Sprintf("key len %d", klen)); err != nil {
		return err
	}
	key := keyText(w.l.KeyType, h.Key)
	if err := w.take(klen, Key, "partition key "+cellfmt.Truncate(key, valueRunes), "key "+cellfmt.Truncate(key, shortRunes)); err != nil {
		return err
	}
	layout := w.l.Schema.Version.DeletionTimeLayout()
	n := h.Size - 2 - klen
	short := fmt.Sprintf("DeletionTime %d B", n)
	if h.Deletion.IsLive() {
		short = fmt.Sprintf("DeletionTime LIVE %d B", n)
	}
	return w.take(n, PartitionDeletion, deletionLabel(layout, h.Deletion, n), short)
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
	unit := "bytes"
	if n == 1 {
		unit = "byte"
	}
	switch {
	case l == deletiontime.Legacy && d.IsLive():
		return fmt.Sprintf("partition DeletionTime LIVE (%d %s, legacy: localDeletionTime 0x7fffffff + markedForDeleteAt Long.MIN_VALUE)", n, unit)
	case d.IsLive():
		return fmt.Sprintf("partition DeletionTime LIVE (%d %s, compact: 0x80)", n, unit)
	}
	return fmt.Sprintf("partition DeletionTime (%d %s, %s): %s", n, unit, l, cellfmt.Deletion(d))
}

// shortRunes bounds a value in a short label.
const shortRunes = 12

// Unfiltered labels one row or range tombstone marker. b holds its bytes
// (and maybe more) starting at Data.db offset base; u is what the decoder
// returned for it.
func (l *Labeler) Unfiltered(b []byte, base int64, u *rows.Unfiltered) ([]Span, error) {
	w := &walker{l: l, b: b, base: base}
	if u.Offset < base || u.Offset-base > int64(len(b)) {
		return nil, w.corrupt(fmt.Sprintf("the unfiltered at %d inside the bytes read", u.Offset), io.ErrUnexpectedEOF)
	}
	w.pos = int(u.Offset - base)
	err := w.unfiltered(u)
	return w.spans, err
}

func (w *walker) unfiltered(u *rows.Unfiltered) error {
	start := w.pos
	what := "row"
	switch u.Kind {
	case rows.KindStaticRow:
		what = "static row"
	case rows.KindMarker:
		what = "marker"
	}
	if err := w.take(1, Flags, fmt.Sprintf("%s flags 0x%02x %s", what, u.Flags, cellfmt.RowFlags(u.Flags)), fmt.Sprintf("%s flags", what)); err != nil {
		return err
	}
	if u.Flags&rows.FlagExtension != 0 {
		if err := w.take(1, Flags, fmt.Sprintf("extended flags 0x%02x %s", u.ExtFlags, cellfmt.ExtFlags(u.ExtFlags)), "ext flags"); err != nil {
			return err
		}
	}
	switch u.Kind {
	case rows.KindMarker:
		if err := w.take(1, Clustering, "bound kind "+u.Bound.Kind.String(), "bound kind"); err != nil {
			return err
		}
		if err := w.take(2, Clustering, fmt.Sprintf("bound size %d value(s) (2 B)", len(u.Bound.Values)), "bound size"); err != nil {
			return err
		}
		if err := w.clustering(u.Bound.Values); err != nil {
			return err
		}
	case rows.KindRow:
		if err := w.clustering(u.Clustering); err != nil {
			return err
		}
	}
	if _, err := w.vint(Size, func(v uint64) (string, string) {
		return fmt.Sprintf("%s size %d (vint: body + previous-size field)", what, v), fmt.Sprintf("size %d", v)
	}); err != nil {
		return err
	}
	if _, err := w.vint(Size, func(v uint64) (string, string) {
		return fmt.Sprintf("previous unfiltered size %d (vint)", v), fmt.Sprintf("prev size %d", v)
	}); err != nil {
		return err
	}
	var err error
	if u.Kind == rows.KindMarker {
		if u.IsBoundary() {
			if err = w.deletion("boundary end deletion", "end del"); err == nil {
				err = w.deletion("boundary start deletion", "start del")
			}
		} else {
			err = w.deletion("bound deletion", "bound del")
		}
	} else {
		err = w.rowBody(u)
	}
	if err != nil {
		return err
	}
	if got := int64(w.pos - start); got != u.Size {
		return w.corrupt(fmt.Sprintf("the %s to end after %d bytes as decoded, the fields add up to %d", what, u.Size, got), nil)
	}
	return nil
}

// clustering labels clustering values: per block of 32 a header vint of
// null/empty bits, then each present value with its length (unless fixed).
func (w *walker) clustering(values [][]byte) error {
	fixed := w.l.Schema.ClusteringFixed
	for off := 0; off < len(values); off += 32 {
		limit := min(len(values), off+32)
		header, err := w.vint(Clustering, func(v uint64) (string, string) {
			return fmt.Sprintf("clustering header 0x%x (vint: null/empty bits)", v), "ck header"
		})
		if err != nil {
			return err
		}
		for i := off; i < limit; i++ {
			shift := uint(i*2) & 63
			if header&(3<<shift) != 0 {
				continue // null or empty: no bytes
			}
			name := "clustering " + strconv.Itoa(i)
			short := "ck" + strconv.Itoa(i)
			if i >= len(fixed) || fixed[i] < 0 {
				if _, err := w.vint(Clustering, func(v uint64) (string, string) {
					return fmt.Sprintf("%s length %d (vint)", name, v), fmt.Sprintf("%s len %d", short, v)
				}); err != nil {
					return err
				}
			}
			var t *cqltype.Type
			if i < len(w.l.ClusteringTypes) {
				t = w.l.ClusteringTypes[i]
			}
			if err := w.take(len(values[i]), Clustering, name+" = "+cellfmt.Value(t, values[i], valueRunes),
				short+" "+cellfmt.Value(t, values[i], shortRunes)); err != nil {
				return err
			}
		}
	}
	return nil
}

// deletion labels a DeletionTime written as header deltas: two vints.
func (w *walker) deletion(what, short string) error {
	if _, err := w.vint(Deletion, func(v uint64) (string, string) {
		return fmt.Sprintf("%s markedForDeleteAt %s (delta vint)", what, cellfmt.Micros(int64(v)+w.l.Schema.MinTimestamp)), short + " ts"
	}); err != nil {
		return err
	}
	_, err := w.vint(Deletion, func(v uint64) (string, string) {
		return fmt.Sprintf("%s localDeletionTime %s (delta vint)", what, cellfmt.Seconds(int64(v)+w.l.Schema.MinLocalDeletionTime)), short + " ldt"
	})
	return err
}

func (w *walker) rowBody(u *rows.Unfiltered) error {
	sch := w.l.Schema
	if u.Flags&rows.FlagHasTimestamp != 0 {
		if _, err := w.vint(Liveness, func(uint64) (string, string) {
			return "row timestamp " + cellfmt.Micros(u.Liveness.Timestamp) + " (delta vint)", "row ts"
		}); err != nil {
			return err
		}
		if u.Flags&rows.FlagHasTTL != 0 {
			if _, err := w.vint(Liveness, func(uint64) (string, string) {
				return fmt.Sprintf("row TTL %ds (delta vint)", u.Liveness.TTL), "row ttl"
			}); err != nil {
				return err
			}
			if _, err := w.vint(Liveness, func(uint64) (string, string) {
				return "row expires " + cellfmt.Seconds(u.Liveness.LocalExpirationTime) + " (delta vint)", "row expiry"
			}); err != nil {
				return err
			}
		}
	}
	if u.Flags&rows.FlagHasDeletion != 0 {
		if err := w.deletion("row deletion", "row del"); err != nil {
			return err
		}
	}
	columns, types := sch.Regular, w.l.RegularTypes
	if u.Kind == rows.KindStaticRow {
		columns, types = sch.Static, w.l.StaticTypes
	}
	present := presentColumns(u, len(columns))
	if u.Flags&rows.FlagHasAllColumns == 0 {
		if err := w.subset(len(columns), present); err != nil {
			return err
		}
	}
	ci := 0
	for _, col := range present {
		if col >= len(columns) {
			return w.corrupt(fmt.Sprintf("a column index below %d", len(columns)), fmt.Errorf("column %d", col))
		}
		c := &columns[col]
		var t *cqltype.Type
		if col < len(types) {
			t = types[col]
		}
		if !c.Complex {
			if ci >= len(u.Cells) || u.Cells[ci].Column != col {
				return w.corrupt("a cell for simple column "+c.Name, nil)
			}
			if err := w.cell(&u.Cells[ci], c, t); err != nil {
				return err
			}
			ci++
			continue
		}
		if u.Flags&rows.FlagHasComplexDelete != 0 {
			if err := w.deletion(c.Name+" complex deletion", c.Name+" del"); err != nil {
				return err
			}
		}
		if _, err := w.vint(CellHeader, func(v uint64) (string, string) {
			return fmt.Sprintf("%s element count %d (vint)", c.Name, v), fmt.Sprintf("%s count %d", c.Name, v)
		}); err != nil {
			return err
		}
		for ci < len(u.Cells) && u.Cells[ci].Column == col {
			if err := w.cell(&u.Cells[ci], c, t); err != nil {
				return err
			}
			ci++
		}
	}
	if ci != len(u.Cells) {
		return w.corrupt(fmt.Sprintf("%d cells in column order", len(u.Cells)), fmt.Errorf("%d labelled", ci))
	}
	return nil
}

// presentColumns lists, ascending, the columns a row carries: those with
// cells and complex columns with a deletion. Cassandra writes no column
// without data, so this is the row's column set.
func presentColumns(u *rows.Unfiltered, ncols int) []int {
	out := make([]int, 0, len(u.Cells)+len(u.ComplexDeletions))
	i, j := 0, 0
	for i < len(u.Cells) || j < len(u.ComplexDeletions) {
		next := ncols
		if i < len(u.Cells) {
			next = u.Cells[i].Column
		}
		if j < len(u.ComplexDeletions) && u.ComplexDeletions[j].Column < next {
			next = u.ComplexDeletions[j].Column
		}
		if len(out) == 0 || out[len(out)-1] != next {
			out = append(out, next)
		}
		for i < len(u.Cells) && u.Cells[i].Column == next {
			i++
		}
		for j < len(u.ComplexDeletions) && u.ComplexDeletions[j].Column == next {
			j++
		}
	}
	return out
}

// subset labels the columns subset: one bitmap vint of missing columns
// below 64 columns; from 64 on, the missing count then the shorter of the
// present or missing index lists (Columns.Serializer.serializeLargeSubset).
func (w *walker) subset(super int, present []int) error {
	if super < 64 {
		_, err := w.vint(Columns, func(v uint64) (string, string) {
			return fmt.Sprintf("columns subset: missing bitmap 0x%x (vint)", v), "columns"
		})
		return err
	}
	missing, err := w.vint(Columns, func(v uint64) (string, string) {
		return fmt.Sprintf("columns subset: %d missing of %d (vint)", v, super), fmt.Sprintf("%d missing", v)
	})
	if err != nil {
		return err
	}
	if missing > uint64(super) {
		return w.corrupt(fmt.Sprintf("at most %d missing columns", super), fmt.Errorf("%d", missing))
	}
	count := super - int(missing)
	n, what := int(missing), "missing column index"
	if count < super/2 {
		n, what = count, "present column index"
	}
	for i := 0; i < n; i++ {
		if _, err := w.vint(Columns, func(v uint64) (string, string) {
			return fmt.Sprintf("%s %d (vint)", what, v), fmt.Sprintf("col %d", v)
		}); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) cell(c *rows.Cell, col *rows.Column, t *cqltype.Type) error {
	name, vt := cellfmt.CellName(col, t, c.Path)
	sn := cellfmt.Truncate(name, shortRunes)
	f, err := w.byte1()
	if err != nil {
		return err
	}
	if f != c.Flags {
		return w.corrupt(fmt.Sprintf("cell flags 0x%02x as decoded", c.Flags), fmt.Errorf("0x%02x", f))
	}
	if err := w.take(1, CellHeader, fmt.Sprintf("cell %s flags 0x%02x %s", name, f, cellfmt.CellFlags(f)), sn+" flags"); err != nil {
		return err
	}
	if f&rows.CellFlagUseRowTS == 0 {
		if _, err := w.vint(CellHeader, func(uint64) (string, string) {
			return "cell " + name + " timestamp " + cellfmt.Micros(c.Timestamp) + " (delta vint)", sn + " ts"
		}); err != nil {
			return err
		}
	}
	if f&rows.CellFlagUseRowTTL == 0 {
		if f&(rows.CellFlagDeleted|rows.CellFlagExpiring) != 0 {
			if _, err := w.vint(CellHeader, func(uint64) (string, string) {
				return "cell " + name + " local deletion time " + cellfmt.Seconds(c.LocalDeletionTime) + " (delta vint)", sn + " ldt"
			}); err != nil {
				return err
			}
		}
		if f&rows.CellFlagExpiring != 0 {
			if _, err := w.vint(CellHeader, func(uint64) (string, string) {
				return fmt.Sprintf("cell %s TTL %ds (delta vint)", name, c.TTL), sn + " ttl"
			}); err != nil {
				return err
			}
		}
	}
	if col.Complex {
		if _, err := w.vint(CellHeader, func(v uint64) (string, string) {
			return fmt.Sprintf("cell %s path length %d (vint)", name, v), fmt.Sprintf("path len %d", v)
		}); err != nil {
			return err
		}
		if err := w.take(len(c.Path), CellPath, "cell path "+name, "path "+sn); err != nil {
			return err
		}
	}
	if f&rows.CellFlagEmptyValue != 0 {
		return nil
	}
	if col.Fixed < 0 {
		if _, err := w.vint(CellHeader, func(v uint64) (string, string) {
			return fmt.Sprintf("cell %s value length %d (vint)", name, v), fmt.Sprintf("%s len %d", sn, v)
		}); err != nil {
			return err
		}
	}
	val := cellfmt.Value(vt, c.Value, valueRunes)
	short := sn + " " + cellfmt.Value(vt, c.Value, shortRunes)
	if c.IsTombstone() {
		val = "(tombstone) " + val
	}
	if col.Counter {
		val = "counter total " + val
		short = sn + " counter " + cellfmt.Value(vt, c.Value, shortRunes)
	}
	return w.take(len(c.Value), CellValue, "cell "+name+" value "+val, short)
}

// Region labels every partition, row and marker that starts in b (Data.db
// bytes from offset base), decoding them with format/rows. A partition cut
// off by the end of b is labelled up to its last whole unfiltered and the
// rest is one Unlabelled span; decoding errors are returned with the spans
// labelled so far.
func (l *Labeler) Region(b []byte, base int64) ([]Span, error) {
	w := &walker{l: l, b: b, base: base}
	dec := rows.NewDecoder(rows.NewBytesSource(b, base), l.Schema)
	dec.SetFile(l.File)
	var h rows.PartitionHeader
	for {
		err := dec.ReadPartitionHeader(&h)
		if err == io.EOF { // the decoder's clean end, never wrapped
			return w.spans, nil
		}
		if err != nil {
			return w.rest(err)
		}
		w.pos = int(h.Offset - base)
		if err := w.header(&h); err != nil {
			return w.spans, err
		}
		for {
			u, err := dec.Next(false)
			if err != nil {
				return w.rest(err)
			}
			if u == nil {
				if err := w.take(1, EndOfPartition, "end of partition 0x01", "end of partition"); err != nil {
					return w.spans, err
				}
				break
			}
			w.pos = int(u.Offset - base)
			if err := w.unfiltered(u); err != nil {
				return w.spans, err
			}
		}
	}
}

// rest ends a region: bytes cut off by the end of the buffer are marked as
// not shown; a real decoding error is returned, naming the file.
func (w *walker) rest(err error) ([]Span, error) {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		if w.pos < len(w.b) {
			w.spans = append(w.spans, Span{Off: w.base + int64(w.pos), Len: len(w.b) - w.pos, Class: Unlabelled,
				Label: "rest of the partition (beyond the bytes shown)", Short: "not shown"})
		}
		return w.spans, nil
	}
	return w.spans, err
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
