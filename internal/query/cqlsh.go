package query

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// Values as cqlsh prints them (pylib/cqlshlib/formatting.py with cqlsh's
// defaults: float and double precision 5, timestamps as
// %Y-%m-%d %H:%M:%S.%f%z in UTC, booleans True/False, blobs 0x..., null
// as null); inside collections, tuples and UDTs strings, inet addresses and
// timestamps are quoted.

// FormatValue is v as cqlsh prints it.
func FormatValue(v Value) string {
	if v.Null {
		return "null"
	}
	if v.Column.Type.IsMultiCell() {
		return formatCells(v.Column.Type, v.Cells)
	}
	return formatCQLSH(v.Column.Type, v.Bytes, false)
}

func formatCQLSH(t *cqltype.Type, v []byte, quote bool) string {
	if v == nil {
		return "null"
	}
	if len(v) == 0 && t.Kind != cqltype.Text && t.Kind != cqltype.Ascii && t.Kind != cqltype.Blob {
		return "" // EMPTY
	}
	switch t.Kind {
	case cqltype.Text, cqltype.Ascii:
		s := strings.ReplaceAll(string(v), `\`, `\\`)
		s = controlChars(s)
		if quote {
			return "'" + strings.ReplaceAll(s, "'", "''") + "'"
		}
		return s
	case cqltype.Blob:
		return "0x" + hex.EncodeToString(v)
	case cqltype.Boolean:
		if len(v) == 1 && v[0] != 0 {
			return "True"
		}
		return "False"
	case cqltype.Float:
		if len(v) == 4 {
			return formatFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(v))), 5)
		}
	case cqltype.Double:
		if len(v) == 8 {
			return formatFloat(math.Float64frombits(binary.BigEndian.Uint64(v)), 5)
		}
	case cqltype.Counter:
		if n, err := cqltype.CounterTotal(v); err == nil {
			return strconv.FormatInt(n, 10)
		}
	case cqltype.Decimal:
		if len(v) >= 4 {
			return pythonDecimal(int32(binary.BigEndian.Uint32(v)), v[4:])
		}
	case cqltype.Timestamp:
		if len(v) == 8 {
			ms := int64(binary.BigEndian.Uint64(v))
			s := time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000000-0700")
			if quote {
				return "'" + s + "'"
			}
			return s
		}
	case cqltype.Date:
		if len(v) == 4 {
			days := int64(binary.BigEndian.Uint32(v)) - 1<<31
			return time.Unix(days*86400, 0).UTC().Format("2006-01-02")
		}
	case cqltype.Time:
		if len(v) == 8 {
			ns := int64(binary.BigEndian.Uint64(v))
			return fmt.Sprintf("%02d:%02d:%02d.%09d", ns/3600e9, ns/60e9%60, ns/1e9%60, ns%1e9)
		}
	case cqltype.Duration:
		// cqlsh's duration_as_str prints what Duration.toString does.
		if s, err := t.Format(v); err == nil {
			return s
		}
	case cqltype.Inet:
		s, err := t.Format(v)
		if err == nil {
			if quote {
				return "'" + s + "'"
			}
			return s
		}
	case cqltype.List, cqltype.Set, cqltype.Map, cqltype.Tuple, cqltype.UDT, cqltype.Vector:
		if s, ok := formatFrozen(t, v); ok {
			return s
		}
	}
	if s, err := t.Format(v); err == nil {
		return s
	}
	return "0x" + hex.EncodeToString(v)
}

// controlChars shows control characters as cqlsh does (\x..).
func controlChars(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			fmt.Fprintf(&b, `\x%02x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// formatFloat is format_floating_point_type without separators: %g with
// the precision widened by the digits before the point when the value is
// not printed in scientific notation.
func formatFloat(f float64, precision int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	exponent := math.MinInt
	if math.Abs(f) > 2.220446049250313e-16 {
		exponent = int(math.Log10(math.Abs(f))) // Python's int() truncates toward zero
	}
	if exponent >= -4 && exponent < precision {
		precision += exponent + 1
	}
	return strconv.FormatFloat(f, 'g', precision, 64)
}

// pythonDecimal is str(decimal.Decimal) of unscaled * 10^-scale.
func pythonDecimal(scale int32, unscaled []byte) string {
	n := new(big.Int)
	if len(unscaled) > 0 {
		n.SetBytes(unscaled)
		if unscaled[0]&0x80 != 0 {
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(unscaled))))
		}
	}
	sign := ""
	if n.Sign() < 0 {
		sign = "-"
		n.Neg(n)
	}
	digits := n.String()
	exp := -int(scale)
	adjusted := exp + len(digits) - 1
	if exp <= 0 && adjusted >= -6 {
		if exp == 0 {
			return sign + digits
		}
		point := len(digits) + exp
		if point > 0 {
			return sign + digits[:point] + "." + digits[point:]
		}
		return sign + "0." + strings.Repeat("0", -point) + digits
	}
	s := digits[:1]
	if len(digits) > 1 {
		s += "." + digits[1:]
	}
	e := "+"
	if adjusted < 0 {
		e = "-"
		adjusted = -adjusted
	}
	return sign + s + "E" + e + strconv.Itoa(adjusted)
}

// formatFrozen prints a frozen collection, tuple, UDT or vector.
func formatFrozen(t *cqltype.Type, v []byte) (string, bool) {
	elems, err := t.Elements(v)
	if err != nil {
		return "", false
	}
	var parts []string
	switch t.Kind {
	case cqltype.Map:
		for i := 0; i+1 < len(elems); i += 2 {
			parts = append(parts, formatCQLSH(t.Params[0], elems[i], true)+": "+formatCQLSH(t.Params[1], elems[i+1], true))
		}
	case cqltype.UDT:
		for i, e := range elems {
			parts = append(parts, t.FieldNames[i]+": "+formatCQLSH(t.Params[i], e, true))
		}
	case cqltype.Tuple:
		for i, e := range elems {
			parts = append(parts, formatCQLSH(t.Params[i], e, true))
		}
	default:
		for _, e := range elems {
			parts = append(parts, formatCQLSH(t.Params[0], e, true))
		}
	}
	return bracket(t.Kind, parts), true
}

func bracket(k cqltype.Kind, parts []string) string {
	open, close := "[", "]"
	switch k {
	case cqltype.Set, cqltype.Map, cqltype.UDT:
		open, close = "{", "}"
	case cqltype.Tuple:
		open, close = "(", ")"
	}
	return open + strings.Join(parts, ", ") + close
}

// formatCells prints a non-frozen collection or UDT from its live cells:
// a set's elements are the paths, a list's the values (paths are
// timeuuids), a map's path: value, a UDT's field (its path, the field's
// index) : value.
func formatCells(t *cqltype.Type, cells []rows.Cell) string {
	var parts []string
	switch t.Kind {
	case cqltype.Set:
		for _, c := range cells {
			parts = append(parts, formatCQLSH(t.Params[0], c.Path, true))
		}
	case cqltype.List:
		for _, c := range cells {
			parts = append(parts, formatCQLSH(t.Params[0], c.Value, true))
		}
	case cqltype.Map:
		for _, c := range cells {
			parts = append(parts, formatCQLSH(t.Params[0], c.Path, true)+": "+formatCQLSH(t.Params[1], c.Value, true))
		}
	case cqltype.UDT:
		// Every field, null where no live cell holds it.
		at := map[int][]byte{}
		for _, c := range cells {
			if len(c.Path) == 2 {
				at[int(binary.BigEndian.Uint16(c.Path))] = c.Value
			}
		}
		for i := range t.Params {
			v, ok := at[i]
			s := "null"
			if ok {
				s = formatCQLSH(t.Params[i], v, true)
			}
			parts = append(parts, t.FieldNames[i]+": "+s)
		}
	}
	return bracket(t.Kind, parts)
}

// Table prints rows as cqlsh does when its output is not a terminal
// (cqlsh -e, or piped): a blank line, then pages of up to 100 rows, each
// laid out to its own column widths (the header and its -----+----- rule
// with the first page only; names left-aligned, values right-aligned),
// a blank line and "(N rows)".
type Table struct {
	w       io.Writer
	names   []string
	page    [][]string
	pages   int
	rows    int64
	started bool
}

// PageSize is cqlsh's default page of rows (--page-size... DEFAULT_PAGE_SIZE).
const PageSize = 100

// NewTable starts a cqlsh table of the plan's columns.
func NewTable(w io.Writer, cols []Column) *Table {
	t := &Table{w: w}
	for _, c := range cols {
		t.names = append(t.names, c.Name)
	}
	return t
}

// Add adds a row (its values are formatted at once: they alias buffers).
func (t *Table) Add(r Row) error {
	vals := make([]string, len(r))
	for i, v := range r {
		vals[i] = FormatValue(v)
	}
	t.page = append(t.page, vals)
	t.rows++
	if len(t.page) == PageSize {
		return t.flush()
	}
	return nil
}

func (t *Table) flush() error {
	if !t.started {
		t.started = true
		if _, err := io.WriteString(t.w, "\n"); err != nil {
			return err
		}
	}
	if t.pages > 0 && len(t.page) == 0 {
		return nil
	}
	widths := make([]int, len(t.names))
	for i, n := range t.names {
		widths[i] = ansi.StringWidth(n)
	}
	for _, r := range t.page {
		for i, v := range r {
			widths[i] = max(widths[i], ansi.StringWidth(v))
		}
	}
	var b strings.Builder
	if t.pages == 0 {
		var cells, rules []string
		for i, n := range t.names {
			cells = append(cells, n+strings.Repeat(" ", widths[i]-ansi.StringWidth(n)))
			rules = append(rules, strings.Repeat("-", widths[i]))
		}
		b.WriteString(strings.TrimRight(" "+strings.Join(cells, " | "), " ") + "\n")
		b.WriteString("-" + strings.Join(rules, "-+-") + "-\n")
		if len(t.page) == 0 {
			b.WriteString("\n") // print_formatted_result's line for no rows
		}
	}
	for _, r := range t.page {
		var cells []string
		for i, v := range r {
			cells = append(cells, strings.Repeat(" ", widths[i]-ansi.StringWidth(v))+v)
		}
		b.WriteString(" " + strings.Join(cells, " | ") + "\n")
	}
	t.pages++
	t.page = t.page[:0]
	_, err := io.WriteString(t.w, b.String())
	return err
}

// End prints the last page and the row count.
func (t *Table) End() error {
	if len(t.page) > 0 || t.pages == 0 {
		if err := t.flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(t.w, "\n(%d rows)\n", t.rows)
	return err
}
