package export

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/inspect"
)

// tableTotals sums the partitions dataset's counts over one source, for
// the sstables dataset.
type tableTotals struct {
	partitions, rows, cells, tombstones int64
}

// The cells dataset's kind and entry values: their dictionaries, and
// the indices the records give.
var (
	kindWords  = [][]byte{[]byte("row"), []byte("static"), []byte("range_tombstone_bound"), []byte("range_tombstone_boundary")}
	entryWords = [][]byte{[]byte("cell"), []byte("liveness"), []byte("deletion"), []byte("column_deletion"), []byte("start"), []byte("end")}
)

const (
	kindRow int32 = iota
	kindStatic
	kindBound
	kindBoundary
)

const (
	entryCell int32 = iota
	entryLiveness
	entryDeletion
	entryColumnDel
	entryStart
	entryEnd
)

// column is what writing a cell of one column needs, worked out once, as
// the dump does: the appenders sstabledump's values are rendered with.
type column struct {
	name    []byte
	word    int32 // the name's index in the column column's dictionary
	counter bool
	complex bool
	udt     *cqltype.Type    // a non-frozen UDT: paths name fields
	path    cqltype.Appender // a collection's element path
	value   cqltype.Appender
	// verbatimPath and verbatimValue, when set, say whether a path or
	// value is its own text (see verbatim).
	verbatimPath, verbatimValue func([]byte) bool
}

// verbatim, for text and ascii, reports whether a value's text in the
// value column (sstabledump's JSON string, unescaped) is the value's own
// bytes: for valid UTF-8 text and ASCII ascii, which the renderer
// escapes and jsonText unescapes again. Those values skip both, and the
// value and value_bytes columns share one copy. Nil for other types.
func verbatim(t *cqltype.Type) func([]byte) bool {
	switch t.Kind {
	case cqltype.Text:
		return utf8.Valid
	case cqltype.Ascii:
		return isASCII
	}
	return nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func columnsOf(cols []rows.Column, types []*cqltype.Type, first int32) []column {
	out := make([]column, len(cols))
	for i, c := range cols {
		t := types[i]
		out[i] = column{name: []byte(c.Name), word: first + int32(i), counter: c.Counter, complex: c.Complex}
		vt := t
		if c.Complex {
			if t.Kind == cqltype.UDT {
				out[i].udt, vt = t, nil
			} else {
				out[i].path, vt = t.ElementPathType().StringJSONAppender(), t.ElementValueType()
				out[i].verbatimPath = verbatim(t.ElementPathType())
			}
		}
		if vt != nil {
			out[i].value, out[i].verbatimValue = vt.CachingJSONAppender(), verbatim(vt)
		}
	}
	return out
}

// tableWriter writes one source's partitions and cells.
type tableWriter struct {
	src           Source
	from          string // what errors name: an sstable's Data.db path
	now           int64
	node          []byte
	name          []byte
	version       []byte
	murmur        bool
	parts         *parquetFile // nil when not selected
	cells         *parquetFile // nil when not selected
	regular       []column
	static        []column
	clust         []cqltype.Appender
	clustVerbatim []func([]byte) bool
	counts        inspect.PartitionCounts
	times         timeRange
	totals        tableTotals
	key           []byte // this partition's key text
	token         int64  // and its token (Murmur3)
	clusterV      []span // the clustering values of the unfiltered being written, rendered into the arena
	// The next record starts a run of the shared columns (the key and
	// token): a partition's first record, and a batch's.
	keyRun bool
}

// source exports src's partitions and cells datasets.
func (e *Exporter) source(src Source, n Names, from string) ([]File, *tableTotals, error) {
	w := &tableWriter{src: src, from: from, now: e.o.Now, node: []byte(e.o.Node), name: []byte(src.Name()), version: []byte(src.Version()),
		murmur: src.Partitioner() == token.Murmur3,
		static: columnsOf(src.Schema().Static, src.StaticTypes(), 0)}
	w.regular = columnsOf(src.Schema().Regular, src.RegularTypes(), int32(len(w.static)))
	var columnWords [][]byte
	for _, c := range append(slices.Clone(w.static), w.regular...) {
		columnWords = append(columnWords, c.name)
	}
	for _, t := range src.ClusteringTypes() {
		w.clust = append(w.clust, t.CachingJSONAppender())
		w.clustVerbatim = append(w.clustVerbatim, verbatim(t))
	}
	var paths []string
	if e.o.Datasets&Partitions != 0 {
		paths = append(paths, e.path("partitions", n, src.Name()))
	}
	if e.o.Datasets&Cells != 0 {
		paths = append(paths, e.path("cells", n, src.Name()))
	}
	if err := e.claim(paths, from); err != nil {
		return nil, nil, err
	}
	var err error
	abort := func() {
		for _, pf := range []*parquetFile{w.parts, w.cells} {
			if pf != nil {
				pf.abort()
			}
		}
	}
	if e.o.Datasets&Partitions != 0 {
		if w.parts, err = e.create(paths[0], partitionSpecs, map[int][][]byte{pNode: {w.node}, pSSTable: {w.name}, pVersion: {w.version}}, from, n); err != nil {
			return nil, nil, err
		}
	}
	if e.o.Datasets&Cells != 0 {
		if w.cells, err = e.create(paths[len(paths)-1], cellSpecs,
			map[int][][]byte{cNode: {w.node}, cSSTable: {w.name}, cKind: kindWords, cEntry: entryWords, cColumn: columnWords}, from, n); err != nil {
			abort()
			return nil, nil, err
		}
	}
	total := src.Length()
	err = src.EachPartition(func(h *rows.PartitionHeader, r PartitionRows) error {
		if e.o.Progress != nil {
			e.o.Progress(h.Offset, total)
		}
		return w.partition(h, r)
	})
	if err != nil {
		abort()
		return nil, nil, err
	}
	var files []File
	for i, pf := range []*parquetFile{w.parts, w.cells} {
		if pf == nil {
			continue
		}
		if err := pf.commit(); err != nil {
			abort()
			return files, nil, err
		}
		f := File{Dataset: [...]string{"partitions", "cells"}[i], Path: pf.final, Rows: pf.rows, Bytes: pf.size()}
		files = append(files, f)
	}
	if e.o.Progress != nil {
		e.o.Progress(total, total)
	}
	return files, &w.totals, nil
}

// partition writes one partition: its cells as they are read, then its
// row of the partitions dataset.
func (w *tableWriter) partition(h *rows.PartitionHeader, r PartitionRows) error {
	w.key = []byte(inspect.FormatKey(w.src.KeyType(), h.Key))
	if w.murmur {
		w.token = w.src.Partitioner().Token(h.Key).Int64()
	}
	w.keyRun = true
	w.counts.Begin(h)
	w.times = newTimeRange()
	if !h.Deletion.IsLive() {
		w.times.deletion(h.Deletion)
	}
	for {
		u, err := r.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			break
		}
		w.counts.Add(u, w.now)
		w.times.unfiltered(u)
		if w.cells != nil {
			if err := w.unfiltered(u); err != nil {
				return fmt.Errorf("%s: Data.db unfiltered at %d: %w", w.from, u.Offset, err)
			}
		}
	}
	size := int64(-1)
	if pos := r.Pos(); pos >= 0 {
		size = pos - h.Offset
	}
	w.totals.partitions++
	w.totals.rows += w.counts.Rows
	w.totals.cells += w.counts.Cells
	w.totals.tombstones += w.counts.Tombstones()
	if w.parts == nil {
		return nil
	}
	return w.partitionRow(h, size)
}

func (w *tableWriter) partitionRow(h *rows.PartitionHeader, size int64) error {
	pf, c, p := w.parts, w.parts.cols, &w.counts
	pf.bytes(c[pKey], w.key)
	start := len(pf.arena)
	pf.arena = hex.AppendEncode(pf.arena, h.Key)
	c[pKeyHex].bytes(start, len(pf.arena))
	tok := w.src.Partitioner().Token(h.Key)
	if w.murmur {
		c[pToken].int64(tok.Int64())
	} else {
		c[pToken].null()
	}
	start = len(pf.arena)
	pf.arena = append(pf.arena, tok.String()...)
	c[pTokenText].bytes(start, len(pf.arena))
	if size >= 0 {
		c[pOffset].int64(h.Offset)
		c[pSize].int64(size)
	} else {
		c[pOffset].null()
		c[pSize].null()
	}
	for i, v := range [...]int64{p.Rows, p.Cells, p.Tombstones(), p.RowTombstones, p.RangeTombstones, p.ComplexTombstones,
		p.CellTombstones, p.RowTTLExpired, p.CellTTLExpired} {
		c[pRows+i].int64(v)
	}
	c[pDeletion].bool(!h.Deletion.IsLive())
	if h.Deletion.IsLive() {
		c[pDeletionTimestamp].null()
		c[pDeletionTime].null()
	} else {
		c[pDeletionTimestamp].int64(h.Deletion.MarkedForDeleteAt)
		c[pDeletionTime].int64(h.Deletion.LocalDeletionTime * 1000)
	}
	t := &w.times
	if t.hasTimestamp {
		c[pMinTimestamp].int64(t.minTimestamp)
		c[pMaxTimestamp].int64(t.maxTimestamp)
	} else {
		c[pMinTimestamp].null()
		c[pMaxTimestamp].null()
	}
	if t.hasDeletionTime {
		c[pMinLocalDeletionTime].int64(t.minDeletionTime * 1000)
	} else {
		c[pMinLocalDeletionTime].null()
	}
	_, err := pf.endRecord()
	return err
}

// renderClustering renders values into the cells file's arena, as the
// clustering of the records that follow.
func (w *tableWriter) renderClustering(values [][]byte) error {
	pf := w.cells
	w.clusterV = w.clusterV[:0]
	for i, v := range values {
		if v == nil || i >= len(w.clust) {
			w.clusterV = append(w.clusterV, nullSpan)
			continue
		}
		start := len(pf.arena)
		if asIs := w.clustVerbatim[i]; asIs != nil && asIs(v) {
			pf.arena = append(pf.arena, v...)
		} else {
			var err error
			if pf.arena, err = w.clust[i](pf.arena, v); err != nil {
				pf.arena = pf.arena[:start]
				return fmt.Errorf("clustering value %d: %w", i, err)
			}
			pf.arena = jsonText(pf.arena, start)
		}
		w.clusterV = append(w.clusterV, spanOf(start, len(pf.arena)))
	}
	return nil
}

// unfiltered writes the records of one row or marker.
func (w *tableWriter) unfiltered(u *rows.Unfiltered) error {
	switch u.Kind {
	case rows.KindMarker:
		if err := w.renderClustering(u.Bound.Values); err != nil {
			return err
		}
		if u.IsBoundary() {
			// As sstabledump prints a boundary: the side it opens as the
			// start, then the side it closes as the end.
			openInclusive := u.Bound.Kind == clustering.ExclEndInclStartBoundary
			if err := w.marker(u, kindBoundary, entryStart, openInclusive, u.StartDeletion); err != nil {
				return err
			}
			return w.marker(u, kindBoundary, entryEnd, !openInclusive, u.EndDeletion)
		}
		entry := entryEnd
		if u.Bound.Kind.IsStart() {
			entry = entryStart
		}
		return w.marker(u, kindBound, entry, u.Bound.Kind.IsInclusive(), u.Deletion)
	case rows.KindStaticRow:
		if u.IsEmpty() {
			return nil // sstabledump skips an empty static row
		}
		w.clusterV = w.clusterV[:0]
		return w.row(u, kindStatic, w.static)
	}
	if err := w.renderClustering(u.Clustering); err != nil {
		return err
	}
	return w.row(u, kindRow, w.regular)
}

// begin starts a record: the columns every record has.
func (w *tableWriter) begin(kind, entry int32) []*col {
	c := w.cells.cols
	if n := w.cells.cur.n; w.keyRun {
		w.keyRun = false
		c[cKey].shareBytes(n, w.key)
		if w.murmur {
			c[cToken].shareInt64(n, w.token)
		} else {
			c[cToken].shareNull(n)
		}
	}
	c[cClustering].list(w.clusterV)
	c[cKind].word(kind)
	c[cEntry].word(entry)
	return c
}

// end closes a record. When the batch was handed on, the clustering
// rendered into its arena is rendered again for the records still to
// come of this unfiltered.
func (w *tableWriter) end(u *rows.Unfiltered) error {
	flushed, err := w.cells.endRecord()
	if err != nil || !flushed {
		return err
	}
	w.keyRun = true
	if len(w.clusterV) == 0 {
		return nil
	}
	if u.Kind == rows.KindMarker {
		return w.renderClustering(u.Bound.Values)
	}
	return w.renderClustering(u.Clustering)
}

// deletionRecord fills a deletion's columns after begin.
func deletionRecord(c []*col, dt deletiontime.DeletionTime) {
	c[cTimestamp].int64(dt.MarkedForDeleteAt)
	c[cTTL].null()
	c[cExpiresAt].null()
	if dt.IsLive() {
		// Stored, but deleting nothing (a LIVE collection deletion).
		c[cLocalDeletionTime].null()
		c[cTombstone].bool(false)
		return
	}
	c[cLocalDeletionTime].int64(dt.LocalDeletionTime * 1000)
	c[cTombstone].bool(true)
}

func (w *tableWriter) marker(u *rows.Unfiltered, kind, entry int32, inclusive bool, dt deletiontime.DeletionTime) error {
	c := w.begin(kind, entry)
	c[cColumn].null()
	c[cPath].null()
	c[cValue].null()
	c[cValueBytes].null()
	deletionRecord(c, dt)
	c[cInclusive].bool(inclusive)
	return w.end(u)
}

func (w *tableWriter) row(u *rows.Unfiltered, kind int32, cols []column) error {
	live := &u.Liveness
	// The row's own liveness (an INSERT's primary-key liveness) is a
	// record only when no cell stands for the row: with cells, it carries
	// the cells' timestamp and TTL, which are in their records, and a
	// record for it beside every row's cells would cost a quarter more
	// records (and break the runs of nulls the columns compress to).
	if live.HasTimestamp && len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 {
		c := w.begin(kind, entryLiveness)
		c[cColumn].null()
		c[cPath].null()
		c[cValue].null()
		c[cValueBytes].null()
		c[cTimestamp].int64(live.Timestamp)
		if live.Expiring() {
			c[cTTL].int32(int32(live.TTL))
			c[cExpiresAt].int64(live.LocalExpirationTime * 1000)
		} else {
			c[cTTL].null()
			c[cExpiresAt].null()
		}
		c[cLocalDeletionTime].null()
		c[cTombstone].bool(false)
		c[cInclusive].null()
		if err := w.end(u); err != nil {
			return err
		}
	}
	if u.HasDeletion() {
		c := w.begin(kind, entryDeletion)
		c[cColumn].null()
		c[cPath].null()
		c[cValue].null()
		c[cValueBytes].null()
		deletionRecord(c, u.Deletion)
		c[cInclusive].null()
		if err := w.end(u); err != nil {
			return err
		}
	}
	cd := 0
	for i := range u.Cells {
		cell := &u.Cells[i]
		// A complex column's deletion precedes its cells, as sstabledump
		// prints it.
		for cd < len(u.ComplexDeletions) && u.ComplexDeletions[cd].Column <= cell.Column {
			if err := w.columnDeletion(u, kind, cols, &u.ComplexDeletions[cd]); err != nil {
				return err
			}
			cd++
		}
		col := &cols[cell.Column]
		if err := w.cell(u, kind, col, cell); err != nil {
			return fmt.Errorf("column %s: %w", col.name, err)
		}
	}
	for ; cd < len(u.ComplexDeletions); cd++ {
		if err := w.columnDeletion(u, kind, cols, &u.ComplexDeletions[cd]); err != nil {
			return err
		}
	}
	return nil
}

func (w *tableWriter) columnDeletion(u *rows.Unfiltered, kind int32, cols []column, d *rows.ComplexDeletion) error {
	c := w.begin(kind, entryColumnDel)
	c[cColumn].word(cols[d.Column].word)
	c[cPath].null()
	c[cValue].null()
	c[cValueBytes].null()
	deletionRecord(c, d.Deletion)
	c[cInclusive].null()
	return w.end(u)
}

func (w *tableWriter) cell(u *rows.Unfiltered, kind int32, col *column, cell *rows.Cell) error {
	pf := w.cells
	// Render first: an error leaves no half-filled record.
	pathStart, valueStart := -1, -1
	value, asIs := col.value, col.verbatimValue
	if col.complex {
		pathStart = len(pf.arena)
		if col.udt != nil {
			name, ft, err := col.udt.FieldPath(cell.Path)
			if err != nil {
				return fmt.Errorf("cell path: %w", err)
			}
			pf.arena = append(pf.arena, name...)
			value, asIs = ft.JSONAppender(), verbatim(ft)
		} else if col.verbatimPath != nil && col.verbatimPath(cell.Path) {
			pf.arena = append(pf.arena, cell.Path...)
		} else {
			var err error
			if pf.arena, err = col.path(pf.arena, cell.Path); err != nil {
				pf.arena = pf.arena[:pathStart]
				return fmt.Errorf("cell path: %w", err)
			}
			pf.arena = jsonText(pf.arena, pathStart)
		}
	}
	pathEnd := len(pf.arena)
	tomb := cell.IsTombstone()
	shared := false // value_bytes is the value's text
	if !tomb {
		valueStart = len(pf.arena)
		switch {
		case col.counter:
			total, err := cqltype.CounterTotal(cell.Value)
			if err != nil {
				pf.arena = pf.arena[:pathEnd]
				return err
			}
			pf.arena = appendInt(pf.arena, total)
		case cell.Value == nil:
			pf.arena = append(pf.arena, "null"...)
		case asIs != nil && asIs(cell.Value):
			pf.arena = append(pf.arena, cell.Value...)
			shared = true
		default:
			var err error
			if pf.arena, err = value(pf.arena, cell.Value); err != nil {
				pf.arena = pf.arena[:pathEnd]
				return err
			}
			pf.arena = jsonText(pf.arena, valueStart)
		}
	}
	valueEnd := len(pf.arena)
	c := w.begin(kind, entryCell)
	c[cColumn].word(col.word)
	if pathStart >= 0 {
		c[cPath].bytes(pathStart, pathEnd)
	} else {
		c[cPath].null()
	}
	if tomb {
		c[cValue].null()
		c[cValueBytes].null()
	} else {
		c[cValue].bytes(valueStart, valueEnd)
		if !shared {
			pf.arena = append(pf.arena, cell.Value...)
			valueStart = valueEnd
		}
		c[cValueBytes].bytes(valueStart, len(pf.arena))
	}
	c[cTimestamp].int64(cell.Timestamp)
	switch {
	case tomb:
		c[cTTL].null()
		c[cExpiresAt].null()
		c[cLocalDeletionTime].int64(cell.LocalDeletionTime * 1000)
	case cell.IsExpiring():
		c[cTTL].int32(int32(cell.TTL))
		c[cExpiresAt].int64(cell.LocalDeletionTime * 1000)
		c[cLocalDeletionTime].null()
	default:
		c[cTTL].null()
		c[cExpiresAt].null()
		c[cLocalDeletionTime].null()
	}
	c[cTombstone].bool(tomb)
	c[cInclusive].null()
	return w.end(u)
}

// jsonText turns the JSON value rendered at b[start:] into the value
// column's text: a JSON string becomes the string itself (unescaped),
// anything else (numbers, booleans, collections, null) stays its JSON.
func jsonText(b []byte, start int) []byte {
	v := b[start:]
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return b
	}
	inner := v[1 : len(v)-1]
	escaped := false
	for _, c := range inner {
		if c == '\\' {
			escaped = true
			break
		}
	}
	if !escaped {
		n := copy(b[start:], inner)
		return b[:start+n]
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return b // not ours to fix: keep what the renderer gave
	}
	return append(b[:start], s...)
}

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// timeRange is a partition's extreme timestamps and earliest local
// deletion time, taken as Cassandra's MetadataCollector takes an
// sstable's: every cell, row liveness and deletion's timestamp, every
// tombstone's and TTL's local deletion (expiration) time.
type timeRange struct {
	hasTimestamp, hasDeletionTime bool
	minTimestamp, maxTimestamp    int64
	minDeletionTime               int64
}

func newTimeRange() timeRange {
	return timeRange{minTimestamp: math.MaxInt64, maxTimestamp: math.MinInt64, minDeletionTime: math.MaxInt64}
}

func (t *timeRange) timestamp(ts int64) {
	t.hasTimestamp = true
	t.minTimestamp = min(t.minTimestamp, ts)
	t.maxTimestamp = max(t.maxTimestamp, ts)
}

func (t *timeRange) deletionTime(ldt int64) {
	t.hasDeletionTime = true
	t.minDeletionTime = min(t.minDeletionTime, ldt)
}

func (t *timeRange) deletion(dt deletiontime.DeletionTime) {
	if dt.IsLive() {
		return
	}
	t.timestamp(dt.MarkedForDeleteAt)
	t.deletionTime(dt.LocalDeletionTime)
}

func (t *timeRange) unfiltered(u *rows.Unfiltered) {
	if u.Kind == rows.KindMarker {
		if u.IsBoundary() {
			t.deletion(u.EndDeletion)
			t.deletion(u.StartDeletion)
		} else {
			t.deletion(u.Deletion)
		}
		return
	}
	if l := &u.Liveness; l.HasTimestamp {
		t.timestamp(l.Timestamp)
		if l.Expiring() {
			t.deletionTime(l.LocalExpirationTime)
		}
	}
	if u.HasDeletion() {
		t.deletion(u.Deletion)
	}
	for i := range u.ComplexDeletions {
		t.deletion(u.ComplexDeletions[i].Deletion)
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		t.timestamp(c.Timestamp)
		if c.IsTombstone() || c.IsExpiring() {
			t.deletionTime(c.LocalDeletionTime)
		}
	}
}
