package rows

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// Encoder serializes partitions the way UnfilteredSerializer and
// Cell.Serializer do, against the same Schema the Decoder reads with: the
// inverse of Decoder, used by writers that produce new data (generate).
// Rows must carry every column of the schema in Cells order, or set
// ColumnsPresent-compatible subsets through the Cells' Column indexes.
type Encoder struct {
	schema  *Schema
	body    []byte
	present []int // scratch: the columns of a row
}

// NewEncoder returns an encoder for schema.
func NewEncoder(schema *Schema) *Encoder { return &Encoder{schema: schema} }

// AppendPartitionHeader appends a partition header: the key with an
// unsigned short length and the partition deletion in the version's layout.
func (e *Encoder) AppendPartitionHeader(dst, key []byte, d deletiontime.DeletionTime) ([]byte, error) {
	return AppendPartitionHeader(dst, key, e.schema.Version.DeletionTimeLayout(), d)
}

// AppendPartitionHeader appends a partition header with the deletion in
// layout, for writers that copy row bodies without an Encoder (convert's
// relinker).
func AppendPartitionHeader(dst, key []byte, layout deletiontime.Layout, d deletiontime.DeletionTime) ([]byte, error) {
	if len(key) > 0xFFFF {
		return dst, fmt.Errorf("rows: partition key of %d bytes exceeds 65535", len(key))
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(key)))
	dst = append(dst, key...)
	return layout.Append(dst, d)
}

// AppendEndOfPartition appends the end-of-partition byte.
func AppendEndOfPartition(dst []byte) []byte { return append(dst, FlagEndOfPartition) }

// AppendUnfiltered appends a row, static row or marker. prevSize is the
// distance from the previous unfiltered's start (or the partition start for
// the first one; 0 for a static row). Flags are derived from u's content;
// u.Flags and u.ExtFlags are ignored.
func (e *Encoder) AppendUnfiltered(dst []byte, u *Unfiltered, prevSize uint64) ([]byte, error) {
	var flags, ext byte
	body := e.body[:0]
	var err error
	switch u.Kind {
	case KindMarker:
		flags = FlagIsMarker
		if u.Bound.Kind.IsBoundary() {
			body = e.appendDeletion(body, u.EndDeletion)
			body = e.appendDeletion(body, u.StartDeletion)
		} else {
			body = e.appendDeletion(body, u.Deletion)
		}
	case KindRow, KindStaticRow:
		if u.Kind == KindStaticRow {
			ext |= ExtFlagIsStatic
		}
		if body, flags, ext, err = e.rowBody(body, u, ext); err != nil {
			return dst, err
		}
	default:
		return dst, fmt.Errorf("rows: unknown unfiltered kind %d", u.Kind)
	}
	e.body = body
	if ext != 0 {
		flags |= FlagExtension
	}
	dst = append(dst, flags)
	if ext != 0 {
		dst = append(dst, ext)
	}
	switch u.Kind {
	case KindMarker:
		if dst, err = clustering.AppendBound(dst, u.Bound, e.schema.ClusteringFixed); err != nil {
			return dst, err
		}
	case KindRow:
		if len(u.Clustering) != len(e.schema.ClusteringFixed) {
			return dst, fmt.Errorf("rows: row has %d clustering values, schema %d", len(u.Clustering), len(e.schema.ClusteringFixed))
		}
		if dst, err = clustering.AppendValues(dst, u.Clustering, e.schema.ClusteringFixed); err != nil {
			return dst, err
		}
	}
	dst = vint.AppendUnsigned(dst, uint64(vint.UnsignedSize(prevSize)+len(body)))
	dst = vint.AppendUnsigned(dst, prevSize)
	return append(dst, body...), nil
}

func (e *Encoder) appendTimestamp(dst []byte, ts int64) []byte {
	return vint.AppendUnsigned(dst, uint64(ts-e.schema.MinTimestamp))
}

// appendLDT and appendTTL write an int-sized delta as
// SerializationHeader does: cast to an int, then written as an unsigned
// vint of the sign-extended long (writeUnsignedVInt32), so that a
// negative delta (LIVE's local deletion time, below any minimum) reads
// back with 5.0's checked cast.
func (e *Encoder) appendLDT(dst []byte, ldt int64) []byte {
	return vint.AppendUnsigned(dst, uint64(int64(int32(ldt-e.schema.MinLocalDeletionTime))))
}

func (e *Encoder) appendTTL(dst []byte, ttl int64) []byte {
	return vint.AppendUnsigned(dst, uint64(int64(int32(ttl-e.schema.MinTTL))))
}

func (e *Encoder) appendDeletion(dst []byte, d deletiontime.DeletionTime) []byte {
	if d.IsLive() && !e.schema.Version.CheckedIntVInts {
		// 3.x/4.x's DeletionTime.LIVE has Integer.MAX_VALUE for its local
		// deletion time (5.0's, Long.MAX_VALUE, writes as a negative int).
		d.LocalDeletionTime = math.MaxInt32
	}
	dst = e.appendTimestamp(dst, d.MarkedForDeleteAt)
	return e.appendLDT(dst, d.LocalDeletionTime)
}

func (e *Encoder) rowBody(body []byte, u *Unfiltered, ext byte) ([]byte, byte, byte, error) {
	var flags byte
	cols := e.schema.Regular
	if u.Kind == KindStaticRow {
		cols = e.schema.Static
	}
	lv := u.Liveness
	if lv.HasTimestamp {
		flags |= FlagHasTimestamp
		body = e.appendTimestamp(body, lv.Timestamp)
		if lv.Expiring() {
			flags |= FlagHasTTL
			body = e.appendTTL(body, lv.TTL)
			body = e.appendLDT(body, lv.LocalExpirationTime)
		}
	}
	if !u.Deletion.IsLive() && u.Deletion != (deletiontime.DeletionTime{}) {
		flags |= FlagHasDeletion
		if u.Shadowable {
			ext |= ExtFlagShadowableDel
		}
		body = e.appendDeletion(body, u.Deletion)
	}
	if sd := u.ScyllaShadowable; !sd.IsLive() && sd != (deletiontime.DeletionTime{}) {
		ext |= ExtFlagScyllaShadowable
		body = e.appendDeletion(body, sd)
	}
	if len(u.ComplexDeletions) > 0 {
		flags |= FlagHasComplexDelete
	}
	// Which columns are present, in schema order (cells must be sorted by
	// column, and by path within a complex column).
	present := e.present[:0]
	last := -1
	for i := range u.Cells {
		ci := u.Cells[i].Column
		if ci < last || ci >= len(cols) {
			return body, 0, 0, fmt.Errorf("rows: cell column %d out of order or outside the %d columns", ci, len(cols))
		}
		if ci != last {
			present = append(present, ci)
			last = ci
		}
	}
	for _, cd := range u.ComplexDeletions {
		if cd.Column >= len(cols) || !cols[cd.Column].Complex {
			return body, 0, 0, fmt.Errorf("rows: complex deletion of column %d, which is not complex", cd.Column)
		}
		if i, found := slices.BinarySearch(present, cd.Column); !found {
			present = slices.Insert(present, i, cd.Column)
		}
	}
	e.present = present
	if len(present) == len(cols) {
		flags |= FlagHasAllColumns
	} else {
		body = appendSubset(body, present, len(cols))
	}
	isPresent := func(col int) bool {
		_, found := slices.BinarySearch(present, col)
		return found
	}
	ci := 0
	for col := range cols {
		if !isPresent(col) {
			continue
		}
		c := &cols[col]
		start := ci
		for ci < len(u.Cells) && u.Cells[ci].Column == col {
			ci++
		}
		if !c.Complex {
			if ci-start != 1 {
				return body, 0, 0, fmt.Errorf("rows: simple column %q has %d cells", c.Name, ci-start)
			}
			body = e.appendCell(body, &u.Cells[start], c, lv)
			continue
		}
		if flags&FlagHasComplexDelete != 0 {
			d := deletiontime.Live
			for _, cd := range u.ComplexDeletions {
				if cd.Column == col {
					d = cd.Deletion
				}
			}
			body = e.appendDeletion(body, d)
		}
		body = vint.AppendUnsigned(body, uint64(ci-start))
		for k := start; k < ci; k++ {
			body = e.appendCell(body, &u.Cells[k], c, lv)
		}
	}
	return body, flags, ext, nil
}

// appendSubset writes the columns present in a row that does not have all
// of the header's (Columns.serializeSubset): below 64 columns a bitmap of
// the missing ones; from 64 on the count of missing columns, then the
// indexes of the present ones or of the missing ones, whichever are fewer
// (serializeLargeSubset).
func appendSubset(body []byte, present []int, super int) []byte {
	if super < 64 {
		missing := uint64(1)<<uint(super) - 1
		for _, ci := range present {
			missing &^= 1 << uint(ci)
		}
		return vint.AppendUnsigned(body, missing)
	}
	body = vint.AppendUnsigned(body, uint64(super-len(present)))
	if len(present) < super/2 {
		for _, ci := range present {
			body = vint.AppendUnsigned(body, uint64(ci))
		}
		return body
	}
	prev := -1
	for _, ci := range present {
		for prev++; prev != ci; prev++ {
			body = vint.AppendUnsigned(body, uint64(prev))
		}
	}
	for prev++; prev != super; prev++ {
		body = vint.AppendUnsigned(body, uint64(prev))
	}
	return body
}

func (e *Encoder) appendCell(body []byte, c *Cell, col *Column, lv Liveness) []byte {
	flags := c.Flags & (CellFlagDeleted | CellFlagExpiring)
	if len(c.Value) == 0 {
		flags |= CellFlagEmptyValue
	}
	useRowTS := lv.HasTimestamp && c.Timestamp == lv.Timestamp
	expiringOrDeleted := flags&(CellFlagDeleted|CellFlagExpiring) != 0
	useRowTTL := flags&CellFlagExpiring != 0 && lv.Expiring() && c.TTL == lv.TTL && c.LocalDeletionTime == lv.LocalExpirationTime
	if useRowTS {
		flags |= CellFlagUseRowTS
	}
	if useRowTTL {
		flags |= CellFlagUseRowTTL
	}
	body = append(body, flags)
	if !useRowTS {
		body = e.appendTimestamp(body, c.Timestamp)
	}
	if expiringOrDeleted && !useRowTTL {
		body = e.appendLDT(body, c.LocalDeletionTime)
	}
	if flags&CellFlagExpiring != 0 && !useRowTTL {
		body = e.appendTTL(body, c.TTL)
	}
	if col.Complex {
		body = vint.AppendUnsigned(body, uint64(len(c.Path)))
		body = append(body, c.Path...)
	}
	if len(c.Value) > 0 {
		if col.Fixed < 0 {
			body = vint.AppendUnsigned(body, uint64(len(c.Value)))
		}
		body = append(body, c.Value...)
	}
	return body
}

// PartitionKeyOf returns the key of the partition header b starts with
// (its unsigned short length, then the key), false when b is too short.
// It is for callers that hold a partition's bytes (the browser's bytes
// view); a scan reads headers with Decoder.ReadPartitionHeader.
func PartitionKeyOf(b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint16(b))
	if 2+n > len(b) {
		return nil, false
	}
	return b[2 : 2+n], true
}
