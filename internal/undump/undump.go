// Package undump writes an sstable from sstabledump JSON: what
// `sstabletool write` does (ScyllaDB's `scylla sstable write`; Cassandra's
// json2sstable, removed in 3.0). The input is what `dump` prints, pretty or
// JSON lines, with raw timestamps (-t) or instants; the table's columns and
// types come from a header (HeaderOfTable of a CQL schema, or a reference
// sstable's, HeaderOfReference). The written sstable dumps (dump -t) to the
// input's bytes when the input is a dump -t of an sstable of the same
// version and nothing in it was changed (see docs/write.md for what dump
// does not print and what is written for it).
//
// The input is read twice or more, never held whole: a first pass checks
// it (order, types, names) and gathers what the serialization header needs
// (the EncodingStats minima, the columns used); the next writes. Partitions
// must come in the partitioner's order, rows in clustering order; when the
// partitions do not, they are sorted by an index of their keys and input
// offsets (memory per partition, not per row), then read in that order.
package undump

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/verify"
)

// Options shape the sstable written.
type Options struct {
	// Version is the sstable version written (any big version the writer
	// writes, or da).
	Version format.Version
	// Header is the table: key, clustering and column types. Its
	// EncodingStats and, unless Reference, its columns are replaced by
	// what the data needs.
	Header *stats.Header
	// Reference says Header is a reference sstable's (--like): its
	// columns are kept as the written header's (a compaction's output has
	// columns no row uses), and so are its EncodingStats minima where the
	// data allows (none above the data's, deltas that fit).
	Reference bool
	// Partitioner is the partitioner's class name.
	Partitioner string
	// Compression nil writes an uncompressed Data.db with CRC.db.
	Compression *writer.Compression
	// BloomFilterFPChance, 0 for Cassandra's default 0.01.
	BloomFilterFPChance float64
	// JSONLines refuses an input that is a pretty document.
	JSONLines bool
	// Generation is the new sstable's id; "" takes the next free one in
	// the destination.
	Generation string
	// Verify checks the staged sstable with verify before it is
	// committed; a problem aborts the write.
	Verify bool
	// FS is what the files are written through (nil: the real disk).
	FS vfs.FS
	// Progress, when set, is called now and then with the input bytes read
	// over all passes and their expected total.
	Progress func(done, total int64)
}

// Input is the JSON to read: it is read several times, from offsets.
type Input struct {
	Name string // for messages
	R    io.ReaderAt
	Size int64
}

// Result says what was written.
type Result struct {
	DataPath   string
	Version    string
	Partitions int64
	Rows       int64 // rows and static rows
	Markers    int64
	Cells      int64
	// Sorted: the partitions were not in the partitioner's order and were
	// sorted.
	Sorted bool
	// PositionsKept: every partition and row is at the "position" the
	// input gave it (so dump -t of the sstable reproduces a dump -t
	// input). Positions says so ("kept"), or why not ("none in the
	// input", "not kept from ...").
	PositionsKept bool
	Positions     string
	// Passes over the input (the first checks it; one more per restart to
	// keep positions).
	Passes int
	// The EncodingStats minima of the written header.
	MinTimestamp, MinLocalDeletionTime, MinTTL int64
	Components                                 []writer.ComponentSize
	Recovered                                  []string // leftovers of killed runs repaired first
	Verified                                   bool
}

// NotVerifiedError is a written sstable that verify found problems in:
// it was not committed.
type NotVerifiedError struct{ Problems []verify.Problem }

func (e *NotVerifiedError) Error() string {
	more := ""
	if len(e.Problems) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(e.Problems)-1)
	}
	return fmt.Sprintf("the written sstable does not verify, so nothing was committed: %v%s", e.Problems[0], more)
}

// maxAttempts bounds the restarts that change the header to keep the
// input's positions.
const maxAttempts = 6

// Write writes the sstable the input describes into dest.
func Write(in Input, dest string, o Options) (*Result, error) {
	if o.Header == nil {
		return nil, errors.New("undump: no table header")
	}
	part, err := token.ForName(o.Partitioner)
	if err != nil {
		return nil, err
	}
	full, err := newTable(o.Version, o.Header, in.Name)
	if err != nil {
		return nil, fmt.Errorf("undump: the table: %w", err)
	}
	prog := &progress{fn: o.Progress, size: in.Size, total: 2 * in.Size}
	sc, err := scan(in, full, part, o, prog)
	if err == nil && sc.partitions == 0 {
		// Cassandra writes no sstable without a partition (a flush of
		// nothing writes nothing), and the index summary needs a key.
		err = dump.Fail(in.Size, "expected at least one partition: an sstable holds one or more")
	}
	if err != nil {
		return nil, dump.Locate(err, in.Name, in.R)
	}
	var order []partRef
	if !sc.sorted {
		if order, err = sortedOrder(in, full, part, o); err != nil {
			return nil, dump.Locate(err, in.Name, in.R)
		}
	}
	if o.Generation == "" {
		if o.Generation, err = writer.NextGeneration(vfs.Or(o.FS), dest); err != nil {
			return nil, err
		}
	}
	p := initialPlan(sc, o)
	res := &Result{Version: o.Version.Name, Sorted: !sc.sorted, Passes: 1}
	if !sc.positions {
		res.Positions = "none in the input"
	} else if !sc.sorted {
		res.Positions = "not kept: the partitions were sorted"
	}
	for attempt := 1; ; attempt++ {
		res.Passes++
		a := &attemptState{in: in, o: o, plan: p, part: part, order: order, prog: prog, res: res, canRestart: attempt < maxAttempts}
		next, err := a.write(dest)
		if err != nil {
			return nil, dump.Locate(err, in.Name, in.R)
		}
		if next != nil {
			p = *next
			prog.total += in.Size
			continue
		}
		if err := a.finish(res); err != nil {
			return nil, err
		}
		return res, nil
	}
}

// progress counts the input read over the passes.
type progress struct {
	fn          func(done, total int64)
	size, total int64
	base        int64 // bytes of the passes done
}

func (p *progress) at(off int64) {
	if p.fn != nil {
		p.fn(p.base+off, p.total)
	}
}

func (p *progress) passDone() { p.base += p.size }

// scanResult is what the first pass learns.
type scanResult struct {
	partitions int64
	positions  bool // every partition has a position, the first at 0
	sorted     bool
	mins       minima
	used       [2][]bool // regular, static: columns the data uses
}

// minima are the EncodingStats a flush of the data would write
// (EncodingStats.Collector).
type minima struct {
	ts, ldt, ttl          int64
	tsSet, ldtSet, ttlSet bool
}

func (m *minima) timestamp(v int64) {
	if !m.tsSet || v < m.ts {
		m.ts, m.tsSet = v, true
	}
}

func (m *minima) deletionTime(v int64) {
	if !m.ldtSet || v < m.ldt {
		m.ldt, m.ldtSet = v, true
	}
}

func (m *minima) ttlValue(v int64) {
	if !m.ttlSet || v < m.ttl {
		m.ttl, m.ttlSet = v, true
	}
}

func (m *minima) deletion(d deletiontime.DeletionTime) {
	if d.IsLive() || d == (deletiontime.DeletionTime{}) {
		return
	}
	m.timestamp(d.MarkedForDeleteAt)
	m.deletionTime(d.LocalDeletionTime)
}

func (m *minima) unfiltered(u *rows.Unfiltered) {
	if u.Kind == rows.KindMarker {
		m.deletion(u.Deletion)
		m.deletion(u.StartDeletion)
		m.deletion(u.EndDeletion)
		return
	}
	if lv := u.Liveness; lv.HasTimestamp {
		m.timestamp(lv.Timestamp)
		if lv.Expiring() {
			m.ttlValue(lv.TTL)
			m.deletionTime(lv.LocalExpirationTime)
		}
	}
	m.deletion(u.Deletion)
	m.deletion(u.ScyllaShadowable)
	for _, cd := range u.ComplexDeletions {
		m.deletion(cd.Deletion)
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		m.timestamp(c.Timestamp)
		switch {
		case c.IsExpiring():
			m.ttlValue(c.TTL)
			m.deletionTime(c.LocalDeletionTime)
		case c.IsTombstone():
			m.deletionTime(c.LocalDeletionTime)
		}
	}
}

// get is EncodingStats.Collector.get: the minima, the epochs where unset.
func (m *minima) get() (ts, ldt, ttl int64) {
	ts, ldt, ttl = stats.TimestampEpoch, stats.DeletionTimeEpoch, 0
	if m.tsSet {
		ts = m.ts
	}
	if m.ldtSet {
		ldt = m.ldt
	}
	if m.ttlSet {
		ttl = m.ttl
	}
	return ts, ldt, ttl
}

// scan is the first pass: it reads everything, checks the order of rows
// within partitions and of partitions, and gathers the minima and the
// columns used.
func scan(in Input, t *table, part token.Partitioner, o Options, prog *progress) (*scanResult, error) {
	sc := &scanResult{sorted: true, positions: true}
	sc.used[0] = make([]bool, len(t.Schema().Regular))
	sc.used[1] = make([]bool, len(t.Schema().Static))
	rd := dump.NewReader(io.NewSectionReader(in.R, 0, in.Size), t)
	rd.JSONLines = o.JSONLines
	ord := merge.NewOrder(t.ClusteringTypes())
	var prevKey []byte
	var prevOff int64
	var prev rows.Unfiltered
	var scratch []byte
	for {
		ph, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		prog.at(ph.Offset)
		if sc.partitions == 0 && ph.Position != 0 || ph.Position < 0 {
			sc.positions = false
		}
		if prevKey != nil {
			switch c := part.CompareKeys(prevKey, ph.Key); {
			case c == 0:
				return nil, dump.Fail(ph.Offset, "expected each partition once: this partition's key is the previous partition's (at byte %d)", prevOff)
			case c > 0:
				sc.sorted = false
			}
		}
		prevKey, prevOff = append(prevKey[:0], ph.Key...), ph.Offset
		sc.partitions++
		sc.mins.deletion(ph.Deletion)
		n := 0
		for ; ; n++ {
			u, _, err := rd.Unfiltered()
			if err != nil {
				return nil, err
			}
			if u == nil {
				break
			}
			off := rd.UnfilteredOffset()
			if u.Kind == rows.KindStaticRow && n > 0 {
				return nil, dump.Fail(off, "expected the static row (static_block) first in its partition")
			}
			if u.Kind != rows.KindStaticRow {
				if prev.Kind != rows.KindStaticRow && n > 0 && ord.Compare(&prev, u) >= 0 {
					return nil, dump.Fail(off, "expected rows and range tombstone markers in clustering order: this one does not sort after the one before it")
				}
				scratch = copyUnfiltered(&prev, u, scratch[:0])
			} else {
				prev.Kind = rows.KindStaticRow
			}
			sc.mins.unfiltered(u)
			used := sc.used[0]
			if u.Kind == rows.KindStaticRow {
				used = sc.used[1]
			}
			for i := range u.Cells {
				used[u.Cells[i].Column] = true
			}
			for _, cd := range u.ComplexDeletions {
				used[cd.Column] = true
			}
		}
		prev.Kind = rows.KindStaticRow // nothing to compare the next partition's first row with
	}
	if sc.partitions == 0 {
		sc.positions = false
	}
	prog.passDone()
	return sc, nil
}

// copyUnfiltered copies the clustering and bound of src into dst (what
// the order compares), their bytes into buf.
func copyUnfiltered(dst, src *rows.Unfiltered, buf []byte) []byte {
	dst.Kind = src.Kind
	dst.Bound.Kind = src.Bound.Kind
	need := 0
	for _, v := range src.Clustering {
		need += len(v)
	}
	for _, v := range src.Bound.Values {
		need += len(v)
	}
	buf = slices.Grow(buf[:0], need)
	cp := func(out [][]byte, in [][]byte) [][]byte {
		out = out[:0]
		for _, v := range in {
			if v == nil {
				out = append(out, nil)
				continue
			}
			at := len(buf)
			buf = append(buf, v...)
			out = append(out, buf[at:len(buf):len(buf)])
		}
		return out
	}
	dst.Clustering = cp(dst.Clustering, src.Clustering)
	dst.Bound.Values = cp(dst.Bound.Values, src.Bound.Values)
	return buf
}

// partRef is a partition of an input that was not in order: its key and
// where its object starts.
type partRef struct {
	key []byte
	off int64
}

// sortedOrder indexes the partitions of an unordered input by key.
func sortedOrder(in Input, t *table, part token.Partitioner, o Options) ([]partRef, error) {
	rd := dump.NewReader(io.NewSectionReader(in.R, 0, in.Size), t)
	rd.JSONLines = o.JSONLines
	var refs []partRef
	for {
		ph, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		refs = append(refs, partRef{key: slices.Clone(ph.Key), off: ph.Offset})
	}
	slices.SortStableFunc(refs, func(a, b partRef) int { return part.CompareKeys(a.key, b.key) })
	for i := 1; i < len(refs); i++ {
		if part.CompareKeys(refs[i-1].key, refs[i].key) == 0 {
			return nil, dump.Fail(refs[i].off, "expected each partition once: this partition's key is also the key of the partition at byte %d", refs[i-1].off)
		}
	}
	return refs, nil
}

// plan is what one attempt writes with: the header (columns and minima)
// and whether it keeps the input's positions.
type plan struct {
	header *stats.Header
	fit    bool
	// allColumns: the header's columns are the table's, not the data's
	// (a restart tries it when the data's do not keep the positions).
	allColumns bool
	sc         *scanResult
}

// initialPlan is the header a flush of the data would write: the columns
// the data uses and its minima; or, with a reference, the reference's
// columns and its minima where the data allows.
func initialPlan(sc *scanResult, o Options) plan {
	h := *o.Header
	ts, ldt, ttl := sc.mins.get()
	if o.Reference {
		if o.Header.MinTimestamp <= ts {
			ts = o.Header.MinTimestamp
		}
		// Minima below zero (ScyllaDB has written -1) are not kept: verify
		// reports them.
		if m := o.Header.MinLocalDeletionTime; m <= ldt && m >= 0 {
			ldt = m
		}
		if m := o.Header.MinTTL; m <= ttl && m >= 0 {
			ttl = m
		}
	}
	h.MinTimestamp, h.MinLocalDeletionTime, h.MinTTL = ts, ldt, ttl
	p := plan{header: &h, fit: sc.positions && sc.sorted, allColumns: o.Reference, sc: sc}
	if !o.Reference {
		h.StaticColumns = usedColumns(o.Header.StaticColumns, o, sc.used[1], true)
		h.RegularColumns = usedColumns(o.Header.RegularColumns, o, sc.used[0], false)
	}
	return p
}

// usedColumns is the header's columns that the data uses, in header order.
// used is indexed in the decoder's (sorted) order, which is the header's.
func usedColumns(cols []stats.Column, o Options, used []bool, static bool) []stats.Column {
	hs, err := sstable.SchemaOfHeader(o.Version, o.Header)
	if err != nil {
		return cols
	}
	sorted := hs.Schema.Regular
	if static {
		sorted = hs.Schema.Static
	}
	keep := map[string]bool{}
	for i, c := range sorted {
		if used[i] {
			keep[c.Name] = true
		}
	}
	var out []stats.Column
	for _, c := range cols {
		if keep[string(c.Name)] {
			out = append(out, c)
		}
	}
	sortHeaderColumns(out)
	return out
}

// withAllColumns is p with the table's every column in the header.
func withAllColumns(p plan, o Options) plan {
	h := *p.header
	h.StaticColumns, h.RegularColumns = o.Header.StaticColumns, o.Header.RegularColumns
	p.header, p.allColumns = &h, true
	return p
}

// finish is the last attempt's end: the components closed, verified if
// asked, committed.
func (a *attemptState) finish(res *Result) error {
	w := a.w
	written, err := w.Close()
	if err != nil {
		w.Abort()
		return err
	}
	st := w.Staging()
	if a.o.Verify {
		staged := w.Descriptor().WithDir(st.Dir()).Path(format.ComponentData)
		rep := verify.SSTable(staged, sstable.Options{}, nil)
		if !rep.OK() {
			w.Abort()
			return &NotVerifiedError{Problems: rep.Problems}
		}
		res.Verified = true
	}
	if err := st.Commit(); err != nil {
		return err
	}
	res.DataPath = w.Descriptor().Path(format.ComponentData)
	res.Recovered = st.Recovered()
	res.Components = written.Components
	h := a.plan.header
	res.MinTimestamp, res.MinLocalDeletionTime, res.MinTTL = h.MinTimestamp, h.MinLocalDeletionTime, h.MinTTL
	res.Partitions, res.Rows, res.Markers, res.Cells = a.partitions, a.rows, a.markers, a.cells
	res.PositionsKept = a.plan.fit && a.diverged == ""
	switch {
	case res.PositionsKept:
		res.Positions = "kept"
	case a.diverged != "":
		res.Positions = a.diverged
	}
	return nil
}
