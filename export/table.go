package export

import (
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/sstabletool/sstabletool/deletiontime"
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
	parts         *filler // nil when not selected
	cells         *filler // nil when not selected
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
	// A merged source's: its number of sstables, the origin of the
	// unfiltered being written (nil for an sstable's), and the sstable
	// column's word for the next record.
	ssts    int
	org     *Origin
	sstWord int32
}

// orgOf is one part of the origin of the unfiltered being written, -1
// for an sstable's.
func (w *tableWriter) orgOf(part func(*Origin) int) int {
	if w.org == nil {
		return -1
	}
	return part(w.org)
}

// orgAt is the origin of cell i (or complex deletion i), -1 when it
// has none.
func (w *tableWriter) orgAt(i int, deletion bool) int {
	if w.org == nil {
		return -1
	}
	parts := w.org.Cells
	if deletion {
		parts = w.org.ComplexDeletions
	}
	if i < len(parts) {
		return parts[i]
	}
	return -1
}

// fromPart says which sstable the next record comes from: origin index
// i of a merged unfiltered (see Origin).
func (w *tableWriter) fromPart(i int) {
	if w.org == nil {
		return
	}
	if i >= 0 && i < w.ssts {
		w.sstWord = int32(i)
	} else {
		w.sstWord = int32(w.ssts) // the word "merged"
	}
}

// source exports src's partitions and cells datasets.
func (e *Exporter) source(src Source, n Names, from string) ([]File, *tableTotals, error) {
	w := &tableWriter{src: src, from: from, now: e.o.Now, node: []byte(e.o.Node), name: []byte(src.Name()), version: []byte(src.Version()),
		murmur: src.Partitioner() == token.Murmur3}
	w.renderers()
	var columnWords [][]byte
	for _, c := range append(slices.Clone(w.static), w.regular...) {
		columnWords = append(columnWords, c.name)
	}
	specs, sstWords := cellSpecs, [][]byte{w.name}
	merged, _ := src.(MergedSource)
	if merged != nil {
		// Each record names the sstable it came from.
		specs = slices.Clone(cellSpecs)
		specs[cSSTable].constant = false
		sstWords = nil
		for _, n := range merged.SSTables() {
			sstWords = append(sstWords, []byte(n))
		}
		sstWords = append(sstWords, []byte("merged"))
		w.ssts = len(sstWords) - 1
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
	var files [2]*parquetFile // partitions, cells
	abort := func() {
		for _, pf := range files {
			if pf != nil {
				pf.abort()
			}
		}
	}
	if e.o.Datasets&Partitions != 0 {
		pf, err := e.create(paths[0], partitionSpecs, map[int][][]byte{pNode: {w.node}, pSSTable: {w.name}, pVersion: {w.version}}, from, n)
		if err != nil {
			return nil, nil, err
		}
		files[0], w.parts = pf, pf.main
	}
	if e.o.Datasets&Cells != 0 {
		pf, err := e.create(paths[len(paths)-1], specs,
			map[int][][]byte{cNode: {w.node}, cSSTable: sstWords, cKind: kindWords, cEntry: entryWords, cColumn: columnWords}, from, n)
		if err != nil {
			abort()
			return nil, nil, err
		}
		files[1], w.cells = pf, pf.main
	}
	total := src.Length()
	var err error
	if s, ok := src.(sstableSource); ok {
		err = e.segmented(s.SSTable, w, files, total)
	} else {
		err = src.EachPartition(func(h *rows.PartitionHeader, r PartitionRows) error {
			if e.o.Progress != nil {
				if merged != nil {
					e.o.Progress(merged.Reached(), total)
				} else {
					e.o.Progress(h.Offset, total)
				}
			}
			return w.partition(h, r)
		})
	}
	if err != nil {
		abort()
		return nil, nil, err
	}
	var out []File
	for i, pf := range files {
		if pf == nil {
			continue
		}
		if err := pf.commit(); err != nil {
			abort()
			return out, nil, err
		}
		f := File{Dataset: [...]string{"partitions", "cells"}[i], Path: pf.final, Rows: pf.rows, Bytes: pf.size()}
		out = append(out, f)
	}
	if e.o.Progress != nil {
		e.o.Progress(total, total)
	}
	return out, &w.totals, nil
}

func (t *tableTotals) add(o *tableTotals) {
	t.partitions += o.partitions
	t.rows += o.rows
	t.cells += o.cells
	t.tombstones += o.tombstones
}

// forSegment is a writer like w for one segment of an sstable's walk
// (segments.go), with renderers of its own; its fillers are the
// segment's.
func (w *tableWriter) forSegment() *tableWriter {
	c := &tableWriter{src: w.src, from: w.from, now: w.now, node: w.node, name: w.name, version: w.version, murmur: w.murmur}
	c.renderers()
	return c
}

// renderers gives w its columns' and clustering's renderers, which are
// its own: the timestamp renderers cache their last second.
func (w *tableWriter) renderers() {
	w.static = columnsOf(w.src.Schema().Static, w.src.StaticTypes(), 0)
	w.regular = columnsOf(w.src.Schema().Regular, w.src.RegularTypes(), int32(len(w.static)))
	w.clust, w.clustVerbatim = nil, nil
	for _, t := range w.src.ClusteringTypes() {
		w.clust = append(w.clust, t.CachingJSONAppender())
		w.clustVerbatim = append(w.clustVerbatim, verbatim(t))
	}
}

// partition writes one partition: its cells as they are read, then its
// row of the partitions dataset.
func (w *tableWriter) partition(h *rows.PartitionHeader, r PartitionRows) error {
	w.key = []byte(inspect.FormatKey(w.src.KeyType(), h.Key))
	if w.murmur {
		w.token = w.src.Partitioner().Token(h.Key).Int64()
	}
	w.keyRun = true
	mr, _ := r.(MergedRows)
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
		if mr != nil {
			w.org = mr.Origin()
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
