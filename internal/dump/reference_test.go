package dump

// The reference dumper: the straightforward implementation the fast one
// replaced, kept verbatim (names prefixed ref) so that tests can demand
// byte-identical output from both on real and generated sstables.

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
)

// refDumper writes partitions of one sstable.
type refDumper struct {
	s     *sstable.SSTable
	o     Options
	bw    *bufio.Writer
	j     *refJSONW
	count int
	buf   []byte
	debug *refDebugWriter // Options.Debug: sstabledump -d's lines
	now   int64
}

// newRefDumper returns a dumper writing to w.
func newRefDumper(w io.Writer, s *sstable.SSTable, o Options) *refDumper {
	if o.Now == nil {
		o.Now = time.Now
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	d := &refDumper{s: s, o: o, bw: bw, j: newRefJSONW(bw, !o.JSONLines), now: o.Now().Unix()}
	if o.Debug {
		d.debug = refNewDebugWriter(bw, s)
	}
	return d
}

// Begin writes what precedes the first partition.
func (d *refDumper) Begin() {
	if d.debug != nil {
		return
	}
	if !d.o.JSONLines {
		d.j.BeginArray(false)
	}
}

// End closes the document and flushes.
func (d *refDumper) End() error {
	if d.debug != nil {
		return d.Flush()
	}
	if !d.o.JSONLines {
		d.j.EndArray()
		d.bw.WriteByte('\n')
	}
	return d.bw.Flush()
}

// Partition decodes the partition whose header dec has just read and writes it.
func (d *refDumper) Partition(h *rows.PartitionHeader, dec *rows.Decoder) error {
	if d.debug != nil {
		return d.debug.Partition(h, dec)
	}
	j := d.j
	if !d.o.JSONLines {
		j.Elem()
	}
	d.count++
	j.BeginObject(false)
	j.Field("table kind")
	j.String("REGULAR")
	j.Field("partition")
	j.BeginObject(false)
	j.Field("key")
	if err := d.key(h.Key); err != nil {
		return fmt.Errorf("%s: Data.db partition key at %d: %w", d.s.Path("Data.db"), h.Offset+2, err)
	}
	j.Field("position")
	j.Int(h.Offset)
	if !h.Deletion.IsLive() {
		d.deletion(h.Deletion)
	}
	j.EndObject()
	j.Field("rows")
	j.BeginArray(false)
	for {
		u, err := dec.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			break
		}
		if err := d.unfiltered(u); err != nil {
			return fmt.Errorf("%s: Data.db unfiltered at %d: %w", d.s.Path("Data.db"), u.Offset, err)
		}
	}
	j.EndArray()
	j.EndObject()
	if d.o.JSONLines {
		d.bw.WriteByte('\n')
	}
	return nil
}

// Flush writes buffered output.
func (d *refDumper) Flush() error {
	if d.debug != nil {
		// The debug writer has its own buffer in front of bw.
		if err := d.debug.Flush(); err != nil {
			return err
		}
	}
	return d.bw.Flush()
}

func (d *refDumper) key(key []byte) error {
	j := d.j
	j.BeginArray(true)
	kt := d.s.KeyType()
	if kt.Kind == cqltype.Composite {
		comps, _, err := kt.Components(key)
		if err != nil {
			return err
		}
		for i, c := range comps {
			if i >= len(kt.Params) {
				break
			}
			s, err := kt.Params[i].Format(c.Value)
			if err != nil {
				return err
			}
			j.Elem()
			j.String(s)
		}
	} else {
		s, err := kt.Format(key)
		if err != nil {
			return err
		}
		j.Elem()
		j.String(s)
	}
	j.EndArray()
	return nil
}

func (d *refDumper) date(unit time.Duration, v int64) string {
	if d.o.RawTimestamps {
		return strconv.FormatInt(v, 10)
	}
	return refInstant(unit, v)
}

// instant renders like java.time.Instant.toString: fractions only when
// non-zero, in groups of three digits.
func refInstant(unit time.Duration, v int64) string {
	var secs, nanos int64
	if unit == time.Microsecond {
		secs, nanos = refFloorDiv(v, 1_000_000), refFloorMod(v, 1_000_000)*1000
	} else {
		secs = v
	}
	t := time.Unix(secs, nanos).UTC()
	s := t.Format("2006-01-02T15:04:05")
	if y := t.Year(); y > 9999 || y < 0 {
		s = fmt.Sprintf("%+d", y) + t.Format("-01-02T15:04:05")
	}
	switch {
	case nanos == 0:
	case nanos%1_000_000 == 0:
		s += fmt.Sprintf(".%03d", nanos/1_000_000)
	case nanos%1000 == 0:
		s += fmt.Sprintf(".%06d", nanos/1000)
	default:
		s += fmt.Sprintf(".%09d", nanos)
	}
	return s + "Z"
}

func refFloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func refFloorMod(a, b int64) int64 { return a - refFloorDiv(a, b)*b }

func (d *refDumper) deletion(dt deletiontime.DeletionTime) { d.deletionField("deletion_info", dt) }

func (d *refDumper) deletionField(name string, dt deletiontime.DeletionTime) {
	j := d.j
	j.Field(name)
	j.BeginObject(true)
	j.Field("marked_deleted")
	j.String(d.date(time.Microsecond, dt.MarkedForDeleteAt))
	j.Field("local_delete_time")
	j.String(d.date(time.Second, dt.LocalDeletionTime))
	j.EndObject()
}

func (d *refDumper) clustering(values [][]byte) error {
	if len(values) == 0 {
		return nil
	}
	j := d.j
	j.Field("clustering")
	j.BeginArray(true)
	for i := range d.s.ClusteringTypes() {
		j.Elem()
		if i >= len(values) {
			j.String("*")
			continue
		}
		if err := d.rawValue(d.s.ClusteringTypes()[i], values[i]); err != nil {
			return fmt.Errorf("clustering value %d: %w", i, err)
		}
	}
	j.EndArray()
	return nil
}

func (d *refDumper) rawValue(t *cqltype.Type, v []byte) error {
	if v == nil {
		d.j.Raw([]byte("null"))
		return nil
	}
	var err error
	d.buf, err = t.AppendJSON(d.buf[:0], v)
	if err != nil {
		return err
	}
	d.j.Raw(d.buf)
	return nil
}

func (d *refDumper) unfiltered(u *rows.Unfiltered) error {
	j := d.j
	if u.Kind == rows.KindMarker {
		j.Elem()
		j.BeginObject(false)
		j.Field("type")
		if u.IsBoundary() {
			j.String("range_tombstone_boundary")
			// sstabledump prints the boundary's open side first, then its close side.
			openInclusive := u.Bound.Kind == clustering.ExclEndInclStartBoundary
			if err := d.bound(true, openInclusive, u.Bound.Values, u.StartDeletion); err != nil {
				return err
			}
			if err := d.bound(false, !openInclusive, u.Bound.Values, u.EndDeletion); err != nil {
				return err
			}
		} else {
			j.String("range_tombstone_bound")
			if err := d.bound(u.Bound.Kind.IsStart(), u.Bound.Kind.IsInclusive(), u.Bound.Values, u.Deletion); err != nil {
				return err
			}
		}
		j.EndObject()
		return nil
	}
	if u.Kind == rows.KindStaticRow && len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 && !u.Liveness.HasTimestamp && !u.HasDeletion() {
		return nil // sstabledump skips an empty static row
	}
	j.Elem()
	j.BeginObject(false)
	j.Field("type")
	if u.Kind == rows.KindStaticRow {
		j.String("static_block")
	} else {
		j.String("row")
	}
	j.Field("position")
	j.Int(u.Offset)
	if u.Kind == rows.KindRow {
		if err := d.clustering(u.Clustering); err != nil {
			return err
		}
	}
	live := u.Liveness
	if live.HasTimestamp {
		j.Field("liveness_info")
		j.BeginObject(true)
		j.Field("tstamp")
		j.String(d.date(time.Microsecond, live.Timestamp))
		if live.Expiring() {
			j.Field("ttl")
			j.Int(live.TTL)
			j.Field("expires_at")
			j.String(d.date(time.Second, live.LocalExpirationTime))
			j.Field("expired")
			j.Bool(live.LocalExpirationTime < d.now)
		}
		j.EndObject()
	}
	if u.HasDeletion() {
		d.deletion(u.Deletion)
	}
	if sd := u.ScyllaShadowable; u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 {
		// Not in sstabledump (Cassandra has no such field): ScyllaDB's
		// shadowable row tombstone, beside any regular one.
		d.deletionField("shadowable_deletion_info", sd)
	}
	j.Field("cells")
	j.BeginArray(false)
	types := d.s.RegularTypes()
	cols := d.s.Schema().Regular
	if u.Kind == rows.KindStaticRow {
		types, cols = d.s.StaticTypes(), d.s.Schema().Static
	}
	cd := 0
	for i := range u.Cells {
		c := &u.Cells[i]
		// A complex column's deletion precedes its cells.
		for cd < len(u.ComplexDeletions) && u.ComplexDeletions[cd].Column <= c.Column {
			d.complexDeletion(cols[u.ComplexDeletions[cd].Column].Name, u.ComplexDeletions[cd].Deletion)
			cd++
		}
		if err := d.cell(c, &cols[c.Column], types[c.Column], live); err != nil {
			return fmt.Errorf("column %s: %w", cols[c.Column].Name, err)
		}
	}
	for ; cd < len(u.ComplexDeletions); cd++ {
		d.complexDeletion(cols[u.ComplexDeletions[cd].Column].Name, u.ComplexDeletions[cd].Deletion)
	}
	j.EndArray()
	j.EndObject()
	return nil
}

func (d *refDumper) bound(start, inclusive bool, values [][]byte, dt deletiontime.DeletionTime) error {
	j := d.j
	if start {
		j.Field("start")
	} else {
		j.Field("end")
	}
	j.BeginObject(false)
	j.Field("type")
	if inclusive {
		j.String("inclusive")
	} else {
		j.String("exclusive")
	}
	if err := d.clustering(values); err != nil {
		return err
	}
	d.deletion(dt)
	j.EndObject()
	return nil
}

func (d *refDumper) complexDeletion(name string, dt deletiontime.DeletionTime) {
	j := d.j
	j.Elem()
	j.BeginObject(true)
	j.Field("name")
	j.String(name)
	d.deletion(dt)
	j.EndObject()
}

func (d *refDumper) cell(c *rows.Cell, col *rows.Column, t *cqltype.Type, live rows.Liveness) error {
	j := d.j
	j.Elem()
	j.BeginObject(true)
	j.Field("name")
	j.String(col.Name)
	valueType := t
	if col.Complex {
		j.Field("path")
		j.BeginArray(true)
		j.Elem()
		if t.Kind == cqltype.UDT {
			name, ft, err := t.FieldPath(c.Path)
			if err != nil {
				return fmt.Errorf("cell path: %w", err)
			}
			j.String(name)
			valueType = ft
		} else {
			s, err := t.ElementPathType().Format(c.Path)
			if err != nil {
				return fmt.Errorf("cell path: %w", err)
			}
			j.String(s)
			valueType = t.ElementValueType()
		}
		j.EndArray()
	}
	if c.IsTombstone() {
		j.Field("deletion_info")
		j.BeginObject(true)
		j.Field("local_delete_time")
		j.String(d.date(time.Second, c.LocalDeletionTime))
		j.EndObject()
	} else {
		j.Field("value")
		if col.Counter {
			total, err := cqltype.CounterTotal(c.Value)
			if err != nil {
				return err
			}
			j.Int(total)
		} else if err := d.rawValue(valueType, c.Value); err != nil {
			return err
		}
	}
	if !live.HasTimestamp || c.Timestamp != live.Timestamp {
		j.Field("tstamp")
		j.String(d.date(time.Microsecond, c.Timestamp))
	}
	if c.IsExpiring() && (!live.HasTimestamp || c.TTL != live.TTL) {
		j.Field("ttl")
		j.Int(c.TTL)
		j.Field("expires_at")
		j.String(d.date(time.Second, c.LocalDeletionTime))
		j.Field("expired")
		j.Bool(c.LocalDeletionTime <= d.now) // !Cell.isLive(now)
	}
	j.EndObject()
	return nil
}

// refJSONW writes JSON in the layout Jackson's DefaultPrettyPrinter gives
// sstabledump ("key" : value, two-space indents, some objects and arrays
// kept on one line), or compact for JSON lines. It writes straight to a
// bufio.Writer so a dump never builds a document in memory.
type refJSONW struct {
	w      *bufio.Writer
	pretty bool
	depth  int
	// per nesting level: whether something was written, whether compact
	first   []bool
	compact []bool
	scratch []byte
}

func newRefJSONW(w *bufio.Writer, pretty bool) *refJSONW { return &refJSONW{w: w, pretty: pretty} }

func (j *refJSONW) newline() {
	j.w.WriteByte('\n')
	for i := 0; i < j.depth; i++ {
		j.w.WriteString("  ")
	}
}

// sep writes what goes before a new member or element.
func (j *refJSONW) sep() {
	n := len(j.first)
	if n == 0 {
		return
	}
	if !j.first[n-1] {
		j.w.WriteByte(',')
	}
	j.first[n-1] = false
	if !j.pretty {
		return
	}
	if j.compact[n-1] {
		j.w.WriteByte(' ')
	} else {
		j.newline()
	}
}

func (j *refJSONW) open(c byte, compact bool) {
	j.w.WriteByte(c)
	j.depth++
	j.first = append(j.first, true)
	j.compact = append(j.compact, compact || j.inCompact())
}

func (j *refJSONW) inCompact() bool { return len(j.compact) > 0 && j.compact[len(j.compact)-1] }

func (j *refJSONW) close(c byte) {
	n := len(j.first)
	empty, compact := j.first[n-1], j.compact[n-1]
	j.first, j.compact = j.first[:n-1], j.compact[:n-1]
	j.depth--
	if j.pretty {
		switch {
		case compact && !empty:
			j.w.WriteByte(' ')
		case !compact && !empty:
			j.newline()
		case empty:
			j.w.WriteByte(' ')
		}
	}
	j.w.WriteByte(c)
}

// BeginObject starts an object as a value (after Field or in an array).
func (j *refJSONW) BeginObject(compact bool) { j.open('{', compact) }
func (j *refJSONW) EndObject()               { j.close('}') }
func (j *refJSONW) BeginArray(compact bool)  { j.open('[', compact) }
func (j *refJSONW) EndArray()                { j.close(']') }

// Elem starts an array element.
func (j *refJSONW) Elem() { j.sep() }

// Field writes a member name.
func (j *refJSONW) Field(name string) {
	j.sep()
	j.writeString(name)
	if j.pretty {
		j.w.WriteString(" : ")
	} else {
		j.w.WriteByte(':')
	}
}

func (j *refJSONW) String(s string) { j.writeString(s) }
func (j *refJSONW) Int(v int64)     { j.w.Write(strconv.AppendInt(j.scratch[:0], v, 10)) }
func (j *refJSONW) Bool(v bool)     { j.w.WriteString(strconv.FormatBool(v)) }
func (j *refJSONW) Raw(b []byte)    { j.w.Write(b) }

func (j *refJSONW) writeString(s string) {
	j.scratch = cqltype.AppendJSONString(j.scratch[:0], s)
	j.w.Write(j.scratch)
}
