package dump

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// This file reads back what the renderer writes: sstabledump JSON, pretty
// or JSON lines, with raw timestamps (-t) or instants, into partition
// headers and rows.Unfiltered, one partition and one row at a time, so
// that an input of any size streams. Values go through cqltype's
// inverses (FromString for keys and cell paths, FromJSON for the rest).
//
// What the renderer leaves out is put back as it must have been: a cell
// without "tstamp" has its row's timestamp; a live cell without "ttl" in
// a row whose liveness info expires takes the row's TTL and expiry when
// it has the row's timestamp (what INSERT ... USING TTL writes) and none
// otherwise; trailing "*" in a bound's clustering are components the
// bound does not have. Counter cells are read as their total, 8 bytes
// big-endian, for the caller to turn into a context (the renderer prints
// only the total). "expired" is derived from the expiry, so it is not
// read, nor is "table kind".

// InputError is JSON that is not what a dump writes: where in the input
// (the byte offset, and once Locate has run, the line and column) and
// what was expected there.
type InputError struct {
	File         string
	Offset       int64 // byte offset in the input
	Line, Column int   // 1-based; 0 until Locate fills them
	Msg          string
}

func (e *InputError) Error() string {
	where := e.File
	if e.Line > 0 {
		where += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	if where != "" {
		where += ": "
	}
	return fmt.Sprintf("%sbyte %d: %s", where, e.Offset, e.Msg)
}

// Locate names the file of an *InputError in err and fills in its line and
// column from the input (read again up to the offset); other errors are
// returned as they are.
func Locate(err error, file string, in io.ReaderAt) error {
	var ie *InputError
	if !errors.As(err, &ie) {
		return err
	}
	ie.File = file
	if in == nil {
		return err
	}
	line, col := 1, 1
	buf := make([]byte, 64<<10)
	for off := int64(0); off < ie.Offset; {
		n, rerr := in.ReadAt(buf[:min(int64(len(buf)), ie.Offset-off)], off)
		for _, c := range buf[:n] {
			if c == '\n' {
				line, col = line+1, 1
			} else if c&0xC0 != 0x80 { // count characters, not UTF-8 continuation bytes
				col++
			}
		}
		off += int64(n)
		if rerr != nil || n == 0 {
			break
		}
	}
	ie.Line, ie.Column = line, col
	return err
}

// Partition is a partition's header as read.
type Partition struct {
	Key      []byte
	Deletion deletiontime.DeletionTime
	// Position is its "position" (its offset in the dumped Data.db), -1
	// when the input has none.
	Position int64
	// Offset is where its object starts in the input: a reader of
	// another section of the same input (NewReader on a section that
	// starts there) reads this partition again.
	Offset int64
}

// Reader reads a document a Dumper wrote, or one partition object after
// another (JSON lines, or a section of a document that starts at a
// partition's Offset), against the table t whose partitions it holds.
type Reader struct {
	dec *jsontext.Decoder
	t   Table
	// JSONLines refuses a document that is an array (the pretty style).
	JSONLines bool

	keyParts   []*cqltype.Type // components of a composite key
	key        *cqltype.Type
	clustering []*cqltype.Type
	cols       [2]readColumns // regular, static

	state readState
	array bool
	part  Partition
	u     rows.Unfiltered
	cells []pendingCell
	arena []byte
	name  []byte // scratch: an unquoted member name
	// uStart is where the last unfiltered's object starts in the input.
	uStart int64
}

// UnfilteredOffset is where the object of the unfiltered Unfiltered last
// returned starts in the input, for the caller's messages.
func (r *Reader) UnfilteredOffset() int64 { return r.uStart }

// Fail is an InputError at off in the input, for a caller that finds what
// it read wrong (a row out of order).
func Fail(off int64, format string, args ...any) error {
	return &InputError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

type readState uint8

const (
	beforeDoc readState = iota
	betweenPartitions
	inRows
	afterRows
	done
)

// readColumns are the static or the regular columns, by name.
type readColumns struct {
	byName map[string]int
	cols   []rows.Column
	types  []*cqltype.Type
}

// pendingCell is a cell as read, before what its row gives is filled in.
type pendingCell struct {
	cell              rows.Cell
	path, value       arenaRef // the path and value, in the row's arena
	hasPath, hasValue bool
	hasTS             bool
	hasTTL            bool
	complexDel        bool
	deletion          deletiontime.DeletionTime
	offset            int64 // where the cell starts, for errors found once the row is read
}

// NewReader returns a reader of in, whose partitions belong to t.
func NewReader(in io.Reader, t Table) *Reader {
	r := &Reader{dec: jsontext.NewDecoder(in), t: t, part: Partition{Position: -1}}
	if kt := t.KeyType(); kt.Kind == cqltype.Composite {
		r.keyParts = kt.Params
	} else {
		r.key = kt
	}
	r.clustering = t.ClusteringTypes()
	r.cols[0] = newReadColumns(t.Schema().Regular, t.RegularTypes())
	r.cols[1] = newReadColumns(t.Schema().Static, t.StaticTypes())
	return r
}

func newReadColumns(cols []rows.Column, types []*cqltype.Type) readColumns {
	rc := readColumns{byName: make(map[string]int, len(cols)), cols: cols, types: types}
	for i, c := range cols {
		rc.byName[c.Name] = i
	}
	return rc
}

// InputOffset is how far the reader has read.
func (r *Reader) InputOffset() int64 { return r.dec.InputOffset() }

func (r *Reader) fail(off int64, format string, args ...any) error {
	return &InputError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// syntaxErr turns the decoder's errors into an InputError.
func (r *Reader) syntaxErr(err error, what string) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return r.fail(se.ByteOffset, "expected %s: invalid JSON: %v", what, se.Err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return r.fail(r.dec.InputOffset(), "expected %s, found the end of the input", what)
	}
	return err
}

// token reads a delimiter of kind k.
func (r *Reader) token(k jsontext.Kind, what string) error {
	off := r.dec.InputOffset()
	if got := r.dec.PeekKind(); got != k {
		if got == 0 {
			_, err := r.dec.ReadToken()
			return r.syntaxErr(err, what)
		}
		v, err := r.dec.ReadValue()
		if err != nil {
			return r.syntaxErr(err, what)
		}
		return r.fail(r.valueStart(off, v), "expected %s, found %s", what, short(v))
	}
	_, err := r.dec.ReadToken()
	if err != nil {
		return r.syntaxErr(err, what)
	}
	return nil
}

// value reads one value, and where it starts.
func (r *Reader) value(what string) (jsontext.Value, int64, error) {
	before := r.dec.InputOffset()
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, before, r.syntaxErr(err, what)
	}
	return v, r.valueStart(before, v), nil
}

// valueStart is where v, just read, starts.
func (r *Reader) valueStart(before int64, v jsontext.Value) int64 {
	return max(before, r.dec.InputOffset()-int64(len(v)))
}

// short is a value for a message: up to 60 bytes of it.
func short(v []byte) string {
	if len(v) > 60 {
		return string(v[:60]) + "..."
	}
	return string(v)
}

// member reads the next member name of an object, or reports the end of
// the object (reading its '}').
func (r *Reader) member(object string) (name []byte, off int64, end bool, err error) {
	if r.dec.PeekKind() == '}' {
		_, err := r.dec.ReadToken()
		return nil, 0, true, err
	}
	before := r.dec.InputOffset()
	v, err := r.dec.ReadValue()
	if err != nil {
		// The message is made only here: made for every member, it
		// took a sixth of write's time.
		return nil, before, false, r.syntaxErr(err, "a member name or the end of "+object)
	}
	off = r.valueStart(before, v)
	r.name, err = unquote(r.name[:0], v)
	return r.name, off, false, err
}

// unquote appends the contents of a JSON string.
func unquote(dst []byte, v jsontext.Value) ([]byte, error) {
	if len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v[1:len(v)-1], '\\') < 0 {
		return append(dst, v[1:len(v)-1]...), nil
	}
	return jsontext.AppendUnquote(dst, v)
}

// stringValue reads a JSON string's contents.
func (r *Reader) stringValue(what string) ([]byte, int64, error) {
	v, off, err := r.value(what)
	if err != nil {
		return nil, off, err
	}
	if v.Kind() != '"' {
		return nil, off, r.fail(off, "expected %s (a JSON string), found %s", what, short(v))
	}
	s, err := unquote(nil, v)
	return s, off, err
}

// intValue reads a JSON number that is an int64.
func (r *Reader) intValue(what string) (int64, int64, error) {
	v, off, err := r.value(what)
	if err != nil {
		return 0, off, err
	}
	n, perr := strconv.ParseInt(string(v), 10, 64)
	if v.Kind() != '0' || perr != nil {
		return 0, off, r.fail(off, "expected %s (an integer), found %s", what, short(v))
	}
	return n, off, nil
}

// dateValue reads a timestamp (micros) or a deletion or expiration time
// (seconds): a JSON string of a number (-t) or an instant.
func (r *Reader) dateValue(micros bool, what string) (int64, error) {
	v, off, err := r.value(what)
	if err != nil {
		return 0, err
	}
	unit := "seconds"
	if micros {
		unit = "microseconds"
	}
	if v.Kind() == '"' {
		s, err := unquote(nil, v)
		if err == nil {
			if n, ok := parseDate(s, micros); ok {
				return n, nil
			}
		}
	}
	return 0, r.fail(off, "expected %s: a JSON string holding %s since the epoch (dump -t) or an instant such as \"2023-11-14T22:13:20Z\", found %s", what, unit, short(v))
}

// Next reads the next partition's header, skipping what is left of the
// previous partition; io.EOF at the end of the input.
func (r *Reader) Next() (*Partition, error) {
	for r.state == inRows || r.state == afterRows {
		u, _, err := r.Unfiltered()
		if err != nil {
			return nil, err
		}
		if u == nil {
			break
		}
	}
	switch r.state {
	case done:
		return nil, io.EOF
	case beforeDoc:
		r.state = betweenPartitions
		if r.dec.PeekKind() == '[' {
			if r.JSONLines {
				return nil, r.fail(r.dec.InputOffset(), "expected JSON lines (one partition object per line), found an array (a pretty dump: leave out --jsonl)")
			}
			r.array = true
			if _, err := r.dec.ReadToken(); err != nil {
				return nil, r.syntaxErr(err, "a partition")
			}
		}
	}
	if r.array && r.dec.PeekKind() == ']' {
		r.dec.ReadToken()
		if _, err := r.dec.ReadToken(); err != io.EOF {
			return nil, r.fail(r.dec.InputOffset(), "expected the end of the input after the document's closing ]")
		}
		r.state = done
		return nil, io.EOF
	}
	if !r.array && r.dec.PeekKind() == 0 {
		if _, err := r.dec.ReadToken(); err != io.EOF {
			return nil, r.syntaxErr(err, "a partition object")
		}
		r.state = done
		return nil, io.EOF
	}
	start := r.dec.InputOffset()
	if err := r.token('{', "a partition object"); err != nil {
		return nil, err
	}
	r.part = Partition{Position: -1, Deletion: deletiontime.Live, Offset: max(start, r.dec.InputOffset()-1)}
	seen := false
	for {
		name, off, end, err := r.member("a partition")
		if err != nil {
			return nil, err
		}
		if end {
			if !seen {
				return nil, r.fail(r.part.Offset, `expected a "partition" member in the partition object`)
			}
			r.state = afterRows
			return &r.part, nil
		}
		switch string(name) {
		case "table kind":
			if _, _, err := r.stringValue(`"table kind"`); err != nil {
				return nil, err
			}
		case "partition":
			if err := r.partitionHeader(); err != nil {
				return nil, err
			}
			seen = true
		case "rows":
			if !seen {
				return nil, r.fail(off, `expected "partition" before "rows" (the partition key must come first)`)
			}
			if err := r.token('[', `the "rows" array`); err != nil {
				return nil, err
			}
			r.state = inRows
			return &r.part, nil
		default:
			return nil, r.fail(off, `expected "table kind", "partition" or "rows" in a partition object, found %q`, name)
		}
	}
}

func (r *Reader) partitionHeader() error {
	if err := r.token('{', `the "partition" object`); err != nil {
		return err
	}
	hasKey := false
	objStart := r.dec.InputOffset()
	for {
		name, off, end, err := r.member(`"partition"`)
		if err != nil {
			return err
		}
		if end {
			break
		}
		switch string(name) {
		case "key":
			if r.part.Key, err = r.partitionKey(); err != nil {
				return err
			}
			hasKey = true
		case "position":
			if r.part.Position, _, err = r.intValue(`the partition's "position"`); err != nil {
				return err
			}
		case "deletion_info":
			if r.part.Deletion, err = r.deletionInfo("the partition's deletion_info"); err != nil {
				return err
			}
		default:
			return r.fail(off, `expected "key", "position" or "deletion_info" in "partition", found %q`, name)
		}
	}
	if !hasKey {
		return r.fail(objStart, `expected a "key" in "partition"`)
	}
	return nil
}

// partitionKey reads the key array: one component per key column, each
// as Format prints it.
func (r *Reader) partitionKey() ([]byte, error) {
	if err := r.token('[', `the key array`); err != nil {
		return nil, err
	}
	types := r.keyParts
	if r.key != nil {
		types = []*cqltype.Type{r.key}
	}
	var key []byte
	for i := 0; r.dec.PeekKind() != ']'; i++ {
		s, off, err := r.stringValue("a partition key component")
		if err != nil {
			return nil, err
		}
		if i >= len(types) {
			return nil, r.fail(off, "expected %d partition key components, found more", len(types))
		}
		v, err := types[i].FromString(string(s))
		if err != nil {
			return nil, r.fail(off, "partition key component %d: expected a %s value as sstabledump prints it: %v", i, types[i].CQL(), err)
		}
		if r.key != nil {
			key = v
			continue
		}
		if len(v) > 0xFFFF {
			return nil, r.fail(off, "partition key component %d is %d bytes, more than 65535", i, len(v))
		}
		key = binary.BigEndian.AppendUint16(key, uint16(len(v)))
		key = append(key, v...)
		key = append(key, 0)
	}
	off := r.dec.InputOffset()
	r.dec.ReadToken()
	if key == nil && len(types) > 0 && r.key == nil {
		return nil, r.fail(off, "expected %d partition key components, found none", len(types))
	}
	if key == nil {
		key = []byte{}
	}
	return key, nil
}

// deletionInfo reads {"marked_deleted": ..., "local_delete_time": ...}.
func (r *Reader) deletionInfo(what string) (deletiontime.DeletionTime, error) {
	var d deletiontime.DeletionTime
	start := r.dec.InputOffset()
	if err := r.token('{', what); err != nil {
		return d, err
	}
	var has [2]bool
	for {
		name, off, end, err := r.member(what)
		if err != nil {
			return d, err
		}
		if end {
			break
		}
		switch string(name) {
		case "marked_deleted":
			d.MarkedForDeleteAt, err = r.dateValue(true, `"marked_deleted"`)
			has[0] = true
		case "local_delete_time":
			d.LocalDeletionTime, err = r.dateValue(false, `"local_delete_time"`)
			has[1] = true
		default:
			return d, r.fail(off, `expected "marked_deleted" or "local_delete_time" in %s, found %q`, what, name)
		}
		if err != nil {
			return d, err
		}
	}
	if !has[0] || !has[1] {
		return d, r.fail(start, `expected both "marked_deleted" and "local_delete_time" in %s`, what)
	}
	return d, nil
}

// Unfiltered reads the partition's next static row, row or range
// tombstone marker, with its "position" (-1 when it has none: markers,
// or an input without positions); nil at the end of the partition. The
// Unfiltered and its bytes are the reader's, valid until the next call.
func (r *Reader) Unfiltered() (*rows.Unfiltered, int64, error) {
	switch r.state {
	case afterRows:
		r.state = betweenPartitions
		return nil, -1, nil
	case inRows:
	default:
		return nil, -1, nil
	}
	if r.dec.PeekKind() == ']' {
		r.dec.ReadToken()
		for {
			name, off, end, err := r.member("a partition")
			if err != nil {
				return nil, -1, err
			}
			if end {
				break
			}
			if string(name) != "table kind" {
				return nil, -1, r.fail(off, `expected the end of the partition object after "rows", found %q`, name)
			}
			if _, _, err := r.stringValue(`"table kind"`); err != nil {
				return nil, -1, err
			}
		}
		r.state = betweenPartitions
		return nil, -1, nil
	}
	r.resetUnfiltered()
	start := r.dec.InputOffset()
	if err := r.token('{', "a row, a range tombstone marker or the end of \"rows\""); err != nil {
		return nil, -1, err
	}
	start = max(start, r.dec.InputOffset()-1)
	r.uStart = start
	name, off, end, err := r.member("a row")
	if err != nil {
		return nil, -1, err
	}
	if end || string(name) != "type" {
		return nil, -1, r.fail(off, `expected "type" as the first member of a row or marker`)
	}
	kind, off, err := r.stringValue(`the row's "type"`)
	if err != nil {
		return nil, -1, err
	}
	u := &r.u
	switch string(kind) {
	case "row":
		u.Kind = rows.KindRow
	case "static_block":
		u.Kind = rows.KindStaticRow
	case "range_tombstone_bound", "range_tombstone_boundary":
		u.Kind = rows.KindMarker
		pos, err := r.marker(string(kind) == "range_tombstone_boundary", start)
		return u, pos, err
	default:
		return nil, -1, r.fail(off, `expected "row", "static_block", "range_tombstone_bound" or "range_tombstone_boundary", found %q`, kind)
	}
	pos, err := r.row(start)
	return u, pos, err
}

func (r *Reader) resetUnfiltered() {
	u := &r.u
	*u = rows.Unfiltered{Clustering: u.Clustering[:0], Cells: u.Cells[:0], ComplexDeletions: u.ComplexDeletions[:0], Bound: clustering.Prefix{Values: u.Bound.Values[:0]}}
	u.Deletion, u.StartDeletion, u.EndDeletion, u.ScyllaShadowable = deletiontime.Live, deletiontime.Live, deletiontime.Live, deletiontime.Live
	r.cells = r.cells[:0]
	r.arena = r.arena[:0]
}

// arenaRef is a value kept in the arena: where and how long; null marks
// a nil value.
type arenaRef struct {
	off, n int
	null   bool
}

func (r *Reader) row(start int64) (int64, error) {
	u := &r.u
	pos := int64(-1)
	cols := &r.cols[0]
	if u.Kind == rows.KindStaticRow {
		cols = &r.cols[1]
	}
	var ck []arenaRef
	hasCK := false
	for {
		name, off, end, err := r.member("a row")
		if err != nil {
			return pos, err
		}
		if end {
			break
		}
		switch string(name) {
		case "position":
			if pos, _, err = r.intValue(`the row's "position"`); err != nil {
				return pos, err
			}
		case "clustering":
			if u.Kind == rows.KindStaticRow {
				return pos, r.fail(off, "expected no clustering in a static row")
			}
			if ck, _, err = r.clusteringValues(false); err != nil {
				return pos, err
			}
			hasCK = true
		case "liveness_info":
			if err := r.liveness(); err != nil {
				return pos, err
			}
		case "deletion_info":
			if u.Deletion, err = r.deletionInfo("the row's deletion_info"); err != nil {
				return pos, err
			}
			u.Flags |= rows.FlagHasDeletion
		case "shadowable_deletion_info":
			if u.ScyllaShadowable, err = r.deletionInfo("the row's shadowable_deletion_info"); err != nil {
				return pos, err
			}
			u.ExtFlags |= rows.ExtFlagScyllaShadowable
		case "cells":
			if err := r.cellsArray(cols); err != nil {
				return pos, err
			}
		default:
			return pos, r.fail(off, `expected "position", "clustering", "liveness_info", "deletion_info" or "cells" in a row, found %q`, name)
		}
	}
	if u.Kind == rows.KindRow && !hasCK && len(r.clustering) > 0 {
		return pos, r.fail(start, "expected a \"clustering\" of %d values in the row", len(r.clustering))
	}
	for _, c := range ck {
		u.Clustering = append(u.Clustering, r.ref(c))
	}
	return pos, r.finishCells(cols)
}

func (r *Reader) ref(c arenaRef) []byte {
	if c.null {
		return nil
	}
	return r.arena[c.off : c.off+c.n : c.off+c.n]
}

// clusteringValues reads a clustering array; in a bound, trailing "*"
// are components the bound leaves out.
func (r *Reader) clusteringValues(bound bool) ([]arenaRef, int64, error) {
	start := r.dec.InputOffset()
	if err := r.token('[', "a clustering array"); err != nil {
		return nil, start, err
	}
	var out []arenaRef
	stars := 0
	for i := 0; r.dec.PeekKind() != ']'; i++ {
		v, off, err := r.value("a clustering value")
		if err != nil {
			return nil, off, err
		}
		if i >= len(r.clustering) {
			return nil, off, r.fail(off, "expected %d clustering values, found more", len(r.clustering))
		}
		if bound && string(v) == `"*"` {
			stars++
			continue
		}
		if stars > 0 {
			return nil, off, r.fail(off, `expected only "*" after a "*" in a bound's clustering`)
		}
		if string(v) == "null" && r.clustering[i].Kind != cqltype.Float && r.clustering[i].Kind != cqltype.Double {
			out = append(out, arenaRef{null: true})
			continue
		}
		b, err := r.clustering[i].AppendFromJSON(r.arena, v)
		if err != nil {
			return nil, off, r.fail(off, "clustering value %d: %v", i, err)
		}
		out = append(out, arenaRef{off: len(r.arena), n: len(b) - len(r.arena)})
		r.arena = b
	}
	off := r.dec.InputOffset()
	r.dec.ReadToken()
	if !bound && len(out) != len(r.clustering) {
		return nil, off, r.fail(off, "expected %d clustering values, found %d", len(r.clustering), len(out))
	}
	return out, off, nil
}

func (r *Reader) liveness() error {
	u := &r.u
	start := r.dec.InputOffset()
	if err := r.token('{', "liveness_info"); err != nil {
		return err
	}
	var hasExpiry bool
	for {
		name, off, end, err := r.member("liveness_info")
		if err != nil {
			return err
		}
		if end {
			break
		}
		switch string(name) {
		case "tstamp":
			u.Liveness.Timestamp, err = r.dateValue(true, `the liveness "tstamp"`)
			u.Liveness.HasTimestamp = true
		case "ttl":
			u.Liveness.TTL, _, err = r.intValue(`the liveness "ttl"`)
		case "expires_at":
			u.Liveness.LocalExpirationTime, err = r.dateValue(false, `the liveness "expires_at"`)
			hasExpiry = true
		case "expired":
			_, _, err = r.value(`"expired"`)
		default:
			return r.fail(off, `expected "tstamp", "ttl", "expires_at" or "expired" in liveness_info, found %q`, name)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case !u.Liveness.HasTimestamp:
		return r.fail(start, `expected a "tstamp" in liveness_info`)
	case u.Liveness.TTL != 0 && !hasExpiry, u.Liveness.TTL == 0 && hasExpiry:
		return r.fail(start, `expected both "ttl" and "expires_at" in liveness_info, or neither`)
	}
	u.Flags |= rows.FlagHasTimestamp
	if u.Liveness.Expiring() {
		u.Flags |= rows.FlagHasTTL
	}
	return nil
}

func (r *Reader) cellsArray(cols *readColumns) error {
	if err := r.token('[', `the "cells" array`); err != nil {
		return err
	}
	for r.dec.PeekKind() != ']' {
		if err := r.cell(cols); err != nil {
			return err
		}
	}
	_, err := r.dec.ReadToken()
	return err
}

// cell reads one cell object (or a complex column's deletion).
func (r *Reader) cell(cols *readColumns) error {
	start := r.dec.InputOffset()
	if err := r.token('{', "a cell"); err != nil {
		return err
	}
	name, off, end, err := r.member("a cell")
	if err != nil {
		return err
	}
	if end || string(name) != "name" {
		return r.fail(off, `expected "name" as the first member of a cell`)
	}
	colName, off, err := r.stringValue("a column name")
	if err != nil {
		return err
	}
	ci, ok := cols.byName[string(colName)]
	if !ok {
		names := make([]string, len(cols.cols))
		for i, c := range cols.cols {
			names[i] = c.Name
		}
		return r.fail(off, "expected one of the table's columns (%s), found %q", joinNames(names), colName)
	}
	col, typ := &cols.cols[ci], cols.types[ci]
	pc := pendingCell{cell: rows.Cell{Column: ci}, offset: start}
	var hasValue, hasPath, hasDeletion, hasExpiry bool
	valueType := typ
	if col.Complex && typ.Kind != cqltype.UDT {
		valueType = typ.ElementValueType()
	}
	var pathRef, valueRef arenaRef
	for {
		name, off, end, err := r.member("a cell")
		if err != nil {
			return err
		}
		if end {
			break
		}
		switch string(name) {
		case "path":
			if !col.Complex {
				return r.fail(off, "expected no path: column %s is not a non-frozen collection or UDT", col.Name)
			}
			if pathRef, valueType, err = r.cellPath(typ); err != nil {
				return err
			}
			hasPath = true
		case "value":
			v, voff, err := r.value("a cell value")
			if err != nil {
				return err
			}
			if col.Counter {
				n, perr := strconv.ParseInt(string(v), 10, 64)
				if v.Kind() != '0' || perr != nil {
					return r.fail(voff, "expected the counter's total (an integer), found %s", short(v))
				}
				at := len(r.arena)
				r.arena = binary.BigEndian.AppendUint64(r.arena, uint64(n))
				valueRef = arenaRef{off: at, n: 8}
			} else {
				if col.Complex && !hasPath {
					return r.fail(voff, `expected the cell's "path" before its "value" (column %s is a non-frozen collection or UDT)`, col.Name)
				}
				if string(v) == "null" && valueType.Kind != cqltype.Float && valueType.Kind != cqltype.Double {
					return r.fail(voff, "expected a %s value, found null (a cell with no value is left out)", valueType.CQL())
				}
				at := len(r.arena)
				b, err := valueType.AppendFromJSON(r.arena, v)
				if err != nil {
					return r.fail(voff, "column %s: %v", col.Name, err)
				}
				r.arena = b
				valueRef = arenaRef{off: at, n: len(b) - at}
			}
			hasValue = true
		case "deletion_info":
			d, doff, err := r.cellDeletion()
			if err != nil {
				return err
			}
			if d.MarkedForDeleteAt != noMarkedDeleted {
				if !col.Complex {
					return r.fail(doff, `expected only "local_delete_time" in the deletion_info of a cell of column %s (a column deletion is for non-frozen collections and UDTs)`, col.Name)
				}
				pc.complexDel, pc.deletion = true, d
			} else {
				pc.cell.Flags |= rows.CellFlagDeleted
				pc.cell.LocalDeletionTime = d.LocalDeletionTime
			}
			hasDeletion = true
		case "tstamp":
			pc.cell.Timestamp, err = r.dateValue(true, `the cell's "tstamp"`)
			pc.hasTS = true
		case "ttl":
			pc.cell.TTL, _, err = r.intValue(`the cell's "ttl"`)
			pc.hasTTL = true
		case "expires_at":
			pc.cell.LocalDeletionTime, err = r.dateValue(false, `the cell's "expires_at"`)
			hasExpiry = true
		case "expired":
			_, _, err = r.value(`"expired"`)
		default:
			return r.fail(off, `expected "path", "value", "deletion_info", "tstamp", "ttl", "expires_at" or "expired" in a cell, found %q`, name)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case pc.complexDel:
		if hasValue || hasPath || pc.hasTS || pc.hasTTL {
			return r.fail(start, "expected only the name and deletion_info in the deletion of column %s", col.Name)
		}
		r.cells = append(r.cells, pc)
		return nil
	case hasDeletion && (hasValue || pc.hasTTL || hasExpiry):
		return r.fail(start, `expected no "value", "ttl" or "expires_at" in a deleted cell`)
	case !hasDeletion && !hasValue:
		return r.fail(start, `expected a "value" or a "deletion_info" in the cell of column %s`, col.Name)
	case pc.hasTTL != hasExpiry:
		return r.fail(start, `expected both "ttl" and "expires_at" in a cell, or neither`)
	case col.Complex && !hasPath:
		return r.fail(start, `expected a "path" in a cell of column %s (a non-frozen collection or UDT)`, col.Name)
	}
	if pc.hasTTL {
		pc.cell.Flags |= rows.CellFlagExpiring
	}
	// The path and value are sliced from the arena once the row is read
	// (finishCells): the arena moves as it grows.
	pc.path, pc.value, pc.hasPath, pc.hasValue = pathRef, valueRef, hasPath, hasValue
	r.cells = append(r.cells, pc)
	return nil
}

// noMarkedDeleted marks a cell deletion_info without "marked_deleted".
const noMarkedDeleted = -1 << 63

// cellDeletion reads a cell's deletion_info: {"local_delete_time"} for a
// deleted cell, or with "marked_deleted" too for a complex column's
// deletion.
func (r *Reader) cellDeletion() (deletiontime.DeletionTime, int64, error) {
	d := deletiontime.DeletionTime{MarkedForDeleteAt: noMarkedDeleted}
	start := r.dec.InputOffset()
	if err := r.token('{', "a cell's deletion_info"); err != nil {
		return d, start, err
	}
	has := false
	for {
		name, off, end, err := r.member("a cell's deletion_info")
		if err != nil {
			return d, start, err
		}
		if end {
			break
		}
		switch string(name) {
		case "marked_deleted":
			d.MarkedForDeleteAt, err = r.dateValue(true, `"marked_deleted"`)
		case "local_delete_time":
			d.LocalDeletionTime, err = r.dateValue(false, `"local_delete_time"`)
			has = true
		default:
			return d, start, r.fail(off, `expected "marked_deleted" or "local_delete_time" in a cell's deletion_info, found %q`, name)
		}
		if err != nil {
			return d, start, err
		}
	}
	if !has {
		return d, start, r.fail(start, `expected a "local_delete_time" in a cell's deletion_info`)
	}
	return d, start, nil
}

// cellPath reads a complex cell's path: a UDT's field name, or the
// element (a list's timeuuid, a set's element, a map's key) as Format
// prints it. It returns the value's type.
func (r *Reader) cellPath(typ *cqltype.Type) (arenaRef, *cqltype.Type, error) {
	if err := r.token('[', "a cell path"); err != nil {
		return arenaRef{}, nil, err
	}
	s, off, err := r.stringValue("a cell path")
	if err != nil {
		return arenaRef{}, nil, err
	}
	if err := r.token(']', "the end of a one-element cell path"); err != nil {
		return arenaRef{}, nil, err
	}
	at := len(r.arena)
	if typ.Kind == cqltype.UDT {
		i := slices.Index(typ.FieldNames, string(s))
		if i < 0 {
			return arenaRef{}, nil, r.fail(off, "expected a field of %s (%s), found %q", typ.CQL(), joinNames(typ.FieldNames), s)
		}
		r.arena = binary.BigEndian.AppendUint16(r.arena, uint16(i))
		return arenaRef{off: at, n: 2}, typ.Params[i], nil
	}
	pt := typ.ElementPathType()
	v, err := pt.FromString(string(s))
	if err != nil {
		return arenaRef{}, nil, r.fail(off, "cell path: expected a %s as sstabledump prints it: %v", pt.CQL(), err)
	}
	r.arena = append(r.arena, v...)
	return arenaRef{off: at, n: len(v)}, typ.ElementValueType(), nil
}

func joinNames(names []string) string {
	if len(names) > 12 {
		names = append(names[:12:12], fmt.Sprintf("and %d more", len(names)-12))
	}
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// finishCells puts into the row what the renderer left out of its cells
// (timestamps and TTLs equal to the row's), orders them as Data.db holds
// them (by column; a column's cells in the input's order), and slices their paths and values from
// the arena, which no longer grows.
func (r *Reader) finishCells(cols *readColumns) error {
	u := &r.u
	lv := u.Liveness
	for i := range r.cells {
		pc := &r.cells[i]
		if pc.complexDel {
			continue
		}
		c := &pc.cell
		if !pc.hasTS {
			if !lv.HasTimestamp {
				return r.fail(pc.offset, `expected a "tstamp" in the cell of column %s: its row has no liveness_info to take it from`, cols.cols[c.Column].Name)
			}
			c.Timestamp = lv.Timestamp
		}
		if !pc.hasTTL && !c.IsTombstone() && lv.Expiring() && c.Timestamp == lv.Timestamp {
			c.Flags |= rows.CellFlagExpiring
			c.TTL, c.LocalDeletionTime = lv.TTL, lv.LocalExpirationTime
		}
		if pc.hasPath {
			c.Path = r.ref(pc.path)
		}
		if pc.hasValue {
			c.Value = r.ref(pc.value)
		} else {
			c.Value = []byte{}
		}
	}
	slices.SortStableFunc(r.cells, func(a, b pendingCell) int {
		if a.cell.Column != b.cell.Column {
			return a.cell.Column - b.cell.Column
		}
		if a.complexDel != b.complexDel { // a column's deletion precedes its cells
			if a.complexDel {
				return -1
			}
			return 1
		}
		// A column's cells stay in the input's order, which a dump prints
		// in the column's order (the writer checks it): the text of some
		// values does not order them (a timestamp before the common era
		// prints its year of era).
		return 0
	})
	for i := range r.cells {
		pc := &r.cells[i]
		col := &cols.cols[pc.cell.Column]
		if i > 0 {
			prev := &r.cells[i-1]
			same := prev.cell.Column == pc.cell.Column
			switch {
			case same && pc.complexDel && prev.complexDel:
				return r.fail(pc.offset, "expected one deletion of column %s in a row, found two", col.Name)
			case same && !col.Complex:
				return r.fail(pc.offset, "expected one cell of column %s in a row, found two", col.Name)
			}
		}
		if pc.complexDel {
			u.ComplexDeletions = append(u.ComplexDeletions, rows.ComplexDeletion{Column: pc.cell.Column, Deletion: pc.deletion})
			u.Flags |= rows.FlagHasComplexDelete
			continue
		}
		u.Cells = append(u.Cells, pc.cell)
	}
	return nil
}

// marker reads the rest of a range tombstone bound or boundary: "start"
// and/or "end", each with its inclusiveness, clustering and deletion.
func (r *Reader) marker(boundary bool, start int64) (int64, error) {
	u := &r.u
	type side struct {
		seen      bool
		inclusive bool
		values    []arenaRef
		deletion  deletiontime.DeletionTime
	}
	var sides [2]side // start, end
	for {
		name, off, end, err := r.member("a range tombstone marker")
		if err != nil {
			return -1, err
		}
		if end {
			break
		}
		var sd *side
		switch string(name) {
		case "start":
			sd = &sides[0]
		case "end":
			sd = &sides[1]
		case "position":
			if _, _, err := r.intValue(`the marker's "position"`); err != nil {
				return -1, err
			}
			continue
		default:
			return -1, r.fail(off, `expected "start" or "end" in a range tombstone marker, found %q`, name)
		}
		if sd.seen {
			return -1, r.fail(off, "expected one %q in a range tombstone marker", name)
		}
		sd.seen = true
		if err := r.bound(&sd.inclusive, &sd.values, &sd.deletion, string(name)); err != nil {
			return -1, err
		}
	}
	switch {
	case boundary && !(sides[0].seen && sides[1].seen):
		return -1, r.fail(start, `expected both "start" and "end" in a range_tombstone_boundary`)
	case !boundary && sides[0].seen == sides[1].seen:
		return -1, r.fail(start, `expected one of "start" and "end" in a range_tombstone_bound`)
	}
	var vals []arenaRef
	switch {
	case boundary:
		if !slices.Equal(refBytes(r, sides[0].values), refBytes(r, sides[1].values)) {
			return -1, r.fail(start, "expected the same clustering on both sides of a range_tombstone_boundary")
		}
		if sides[0].inclusive == sides[1].inclusive {
			return -1, r.fail(start, "expected a boundary's start and end to differ in inclusiveness (one closes a range where the other opens)")
		}
		vals = sides[0].values
		u.Bound.Kind = clustering.InclEndExclStartBoundary
		if sides[0].inclusive {
			u.Bound.Kind = clustering.ExclEndInclStartBoundary
		}
		u.StartDeletion, u.EndDeletion = sides[0].deletion, sides[1].deletion
	case sides[0].seen:
		vals, u.Deletion = sides[0].values, sides[0].deletion
		u.Bound.Kind = clustering.ExclStartBound
		if sides[0].inclusive {
			u.Bound.Kind = clustering.InclStartBound
		}
	default:
		vals, u.Deletion = sides[1].values, sides[1].deletion
		u.Bound.Kind = clustering.ExclEndBound
		if sides[1].inclusive {
			u.Bound.Kind = clustering.InclEndBound
		}
	}
	for _, v := range vals {
		u.Bound.Values = append(u.Bound.Values, r.ref(v))
	}
	return -1, nil
}

// refBytes is the text of references, to compare two sides' clusterings.
func refBytes(r *Reader, refs []arenaRef) []string {
	out := make([]string, len(refs))
	for i, ref := range refs {
		if ref.null {
			out[i] = "\x00null"
		} else {
			out[i] = string(r.ref(ref))
		}
	}
	return out
}

// bound reads one side of a marker: {"type": "inclusive"|"exclusive",
// "clustering": [...], "deletion_info": {...}}.
func (r *Reader) bound(inclusive *bool, values *[]arenaRef, d *deletiontime.DeletionTime, side string) error {
	start := r.dec.InputOffset()
	if err := r.token('{', "the "+side+" of a marker"); err != nil {
		return err
	}
	var hasType, hasDeletion bool
	for {
		name, off, end, err := r.member("the " + side + " of a marker")
		if err != nil {
			return err
		}
		if end {
			break
		}
		switch string(name) {
		case "type":
			s, soff, err := r.stringValue(`the bound's "type"`)
			if err != nil {
				return err
			}
			switch string(s) {
			case "inclusive":
				*inclusive = true
			case "exclusive":
				*inclusive = false
			default:
				return r.fail(soff, `expected "inclusive" or "exclusive", found %q`, s)
			}
			hasType = true
		case "clustering":
			if *values, _, err = r.clusteringValues(true); err != nil {
				return err
			}
		case "deletion_info":
			if *d, err = r.deletionInfo("the bound's deletion_info"); err != nil {
				return err
			}
			hasDeletion = true
		default:
			return r.fail(off, `expected "type", "clustering" or "deletion_info" in the %s of a marker, found %q`, side, name)
		}
	}
	if !hasType || !hasDeletion {
		return r.fail(start, `expected a "type" and a "deletion_info" in the %s of a marker`, side)
	}
	return nil
}
