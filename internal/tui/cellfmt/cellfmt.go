// Package cellfmt turns decoded Data.db values into the short texts the
// browser shows: clustering prefixes, cell names with their collection
// element, values, timestamps and deletion times. The decoding itself is
// cqltype's (Format, AppendJSON, CounterTotal); this package only chooses
// which rendering fits a one-line display and truncates it.
package cellfmt

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/words"
)

// Ellipsis marks text that was cut.
const Ellipsis = "…"

// Truncate cuts s to at most max terminal cells (0 keeps everything),
// ending with an ellipsis when it cut. Wide characters take two cells and
// escape sequences none (ansi.Truncate), so columns stay aligned.
func Truncate(s string, max int) string {
	if max <= 0 {
		return s
	}
	return ansi.Truncate(s, max, Ellipsis)
}

// Value renders a value of type t: JSON the way sstabledump prints it
// (strings quoted, collections as arrays and objects, numbers bare), and
// 0x-hex when the bytes do not decode as t. max limits the cells (0 = all).
func Value(t *cqltype.Type, v []byte, max int) string {
	if v == nil {
		return "null"
	}
	if t == nil {
		return Truncate(hex(v), max)
	}
	if t.IsCounter() {
		if total, err := cqltype.CounterTotal(v); err == nil {
			return strconv.FormatInt(total, 10)
		}
		return Truncate(hex(v), max)
	}
	b, err := t.AppendJSON(nil, v)
	if err != nil {
		return Truncate(hex(v)+" (not a valid "+t.CQL()+")", max)
	}
	return Truncate(string(b), max)
}

func hex(v []byte) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2, 2+2*len(v))
	b[0], b[1] = '0', 'x'
	for _, c := range v {
		b = append(b, digits[c>>4], digits[c&15])
	}
	return string(b)
}

// NamedClustering renders clustering values as "(v1, v2)" with their
// types, each after its column's name when a schema gives them:
// "(c1=v1, c2=v2)".
func NamedClustering(names []string, types []*cqltype.Type, values [][]byte, max int) string {
	var sb strings.Builder
	sb.WriteByte('(')
	for i, v := range values {
		if i > 0 {
			sb.WriteString(", ")
		}
		if i < len(names) {
			sb.WriteString(names[i] + "=")
		}
		var t *cqltype.Type
		if i < len(types) {
			t = types[i]
		}
		sb.WriteString(Value(t, v, 0))
	}
	sb.WriteByte(')')
	return Truncate(sb.String(), max)
}

// Micros renders a microsecond write timestamp as UTC time.
func Micros(us int64) string {
	if us == math.MinInt64 {
		return "none"
	}
	return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.000000Z")
}

// Seconds renders a local deletion or expiration time (seconds since the epoch).
func Seconds(s int64) string {
	if s == math.MaxInt32 || s == math.MaxInt64 {
		return "never"
	}
	return time.Unix(s, 0).UTC().Format("2006-01-02T15:04:05Z")
}

// Deletion renders a DeletionTime: "LIVE" or when and at what timestamp it deletes.
func Deletion(d deletiontime.DeletionTime) string {
	if d.IsLive() {
		return "LIVE"
	}
	return fmt.Sprintf("deleted ts=%s local=%s", Micros(d.MarkedForDeleteAt), Seconds(d.LocalDeletionTime))
}

// CellName names a cell: the column, and for an element of a multi-cell
// column its element: list[timeuuid], set{element}, map[key], udt.field.
// It also returns the type of the cell's value.
func CellName(col *rows.Column, t *cqltype.Type, path []byte) (string, *cqltype.Type) {
	if !col.Complex || t == nil {
		return col.Name, t
	}
	switch t.Kind {
	case cqltype.UDT:
		if len(path) == 2 {
			pos := int(int16(binary.BigEndian.Uint16(path)))
			ft := t.FieldType(pos)
			name := strconv.Itoa(pos)
			if pos >= 0 && pos < len(t.FieldNames) {
				name = t.FieldNames[pos]
			}
			return col.Name + "." + name, ft
		}
		return col.Name + "." + hex(path), nil
	case cqltype.Set:
		return col.Name + "{" + Value(t.ElementPathType(), path, 0) + "}", t.ElementValueType()
	}
	pt := t.ElementPathType()
	var p string
	if pt != nil {
		if s, err := pt.Format(path); err == nil {
			p = s
		}
	}
	if p == "" {
		p = hex(path)
	}
	return col.Name + "[" + p + "]", t.ElementValueType()
}

// CellFlags names the flags of a cell (Cell.Serializer).
func CellFlags(f byte) string {
	var parts []string
	for _, n := range []struct {
		bit  byte
		name string
	}{{rows.CellFlagDeleted, "IS_DELETED"}, {rows.CellFlagExpiring, "IS_EXPIRING"}, {rows.CellFlagEmptyValue, "HAS_EMPTY_VALUE"},
		{rows.CellFlagUseRowTS, "USE_ROW_TIMESTAMP"}, {rows.CellFlagUseRowTTL, "USE_ROW_TTL"}} {
		if f&n.bit != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// RowFlags names the flags of a row or marker (UnfilteredSerializer).
func RowFlags(f byte) string {
	var parts []string
	for _, n := range []struct {
		bit  byte
		name string
	}{{rows.FlagEndOfPartition, "END_OF_PARTITION"}, {rows.FlagIsMarker, "IS_MARKER"}, {rows.FlagHasTimestamp, "HAS_TIMESTAMP"},
		{rows.FlagHasTTL, "HAS_TTL"}, {rows.FlagHasDeletion, "HAS_DELETION"}, {rows.FlagHasAllColumns, "HAS_ALL_COLUMNS"},
		{rows.FlagHasComplexDelete, "HAS_COMPLEX_DELETION"}, {rows.FlagExtension, "EXTENSION_FLAG"}} {
		if f&n.bit != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// ExtFlags names the extended flags of a row.
func ExtFlags(f byte) string {
	var parts []string
	if f&rows.ExtFlagIsStatic != 0 {
		parts = append(parts, "IS_STATIC")
	}
	if f&rows.ExtFlagScyllaShadowable != 0 {
		parts = append(parts, "HAS_SCYLLA_SHADOWABLE_DELETION")
	}
	if f&rows.ExtFlagShadowableDel != 0 {
		parts = append(parts, "HAS_SHADOWABLE_DELETION")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// Bytes renders a byte count with thousands separators: "67,194 B".
func Bytes(n int64) string { return words.Thousands(n) + " B" }

// Human renders a byte size in binary units: "1.5 MiB".
func Human(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit || m <= -unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
