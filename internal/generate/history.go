package generate

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/workload"
)

// A history is one table's flush history: sstable k (generation k+1)
// holds what a memtable of day k held when it was flushed. A partition
// is first written on some day (every row inserted, some with a TTL) and
// on later days often updated: cells overwritten with newer timestamps,
// rows, cells, collection elements and whole collections deleted, ranges
// of rows deleted, the partition deleted (and partly written again), and
// now and then a cell written again with the very timestamp of its first
// version (a client-supplied timestamp), to exercise the tie rules. A
// counter table instead gets counter updates by three nodes, each
// sstable holding every node's shard as of that day (and, for some
// cells, a pre-2.1 local shard, which merging adds up).
//
// Each sstable is what Cassandra's memtable would flush: within it no
// deletion shadows data it holds (a day's deletions are older than that
// day's writes). Everything derives from the seed, the partition, the
// row and the day through a hash, so a history is byte-for-byte
// deterministic and needs no memory per partition.

// HistoryOptions controls a history.
type HistoryOptions struct {
	Options
	// SSTables is how many sstables (days, or windows) the history has.
	SSTables int
	// Window, in seconds, makes the history TWCS-like instead (see
	// windows.go): sstable k holds only the writes of time window k, each
	// with a TTL, nothing overwritten or deleted.
	Window int64
	// TTL is every write's TTL in a TWCS-like history, in seconds (0: two
	// windows).
	TTL int64
	// LateWindow, from 1 to SSTables, adds one more sstable to a TWCS-like
	// history: rows written after the last window with the timestamps of
	// window LateWindow and no TTL. 0: none.
	LateWindow int
}

// HistoryResult describes a history written.
type HistoryResult struct {
	DataPaths  []string // oldest first
	Partitions int64    // distinct partitions
	Rows       int64    // row versions written, over every sstable
	// Now is the time (seconds) the history is written towards: a day
	// after the last sstable's. Some TTLs have run out by then, others
	// not; merge with --now at it (or around it) to see both.
	Now       int64
	Recovered []string
}

// dayMicros is one sstable's span of write time.
const dayMicros = 86_400_000_000

// history writes a table's sstables one day at a time.
type history struct {
	t      *table
	n      int
	w0     int64 // day 0's first timestamp (µs)
	shortT int64 // a TTL that runs out before Now
	longT  int64 // one that does not
	rates  struct{ partDel, rangeDel, rowDel, cellDel, collection, tie, static float64 }

	key   []byte
	vals  []byte
	u     rows.Unfiltered
	cells []rows.Cell
	clust [][]byte
}

// GenerateHistory writes a history of o.SSTables sstables of the
// profile's table into dir (generations 1..N).
func GenerateHistory(p *workload.Profile, dir string, o HistoryOptions) (*HistoryResult, error) {
	if o.SSTables < 1 {
		return nil, fmt.Errorf("a history needs at least 1 sstable, got %d", o.SSTables)
	}
	t, err := newTable(p, o.Seed)
	if err != nil {
		return nil, err
	}
	if o.Version.Name == "" {
		o.Version = oa.Version
	}
	t.schema.Version = o.Version
	h := &history{t: t, n: o.SSTables, w0: t.ts0}
	h.shortT = int64(p.TTL.Seconds)
	if h.shortT <= 0 || h.shortT > dayMicros/1_000_000 {
		h.shortT = 3600
	}
	h.longT = int64(o.SSTables+30) * 86_400
	rate := func(share, lo float64) float64 {
		if share <= 0 {
			return 0
		}
		return min(0.4, max(lo, share*5))
	}
	m := p.Mix
	total := m.Insert + m.Overwrite + m.DeletePartition + m.DeleteRow + m.DeleteCell + m.DeleteRange
	if total > 0 {
		h.rates.partDel = rate(m.DeletePartition/total, 0.05)
		h.rates.rangeDel = rate(m.DeleteRange/total, 0.1)
		h.rates.rowDel = rate(m.DeleteRow/total, 0.1)
		h.rates.cellDel = rate(m.DeleteCell/total, 0.1)
	}
	if len(t.ck) == 0 {
		h.rates.rangeDel = 0
	}
	h.rates.collection, h.rates.tie, h.rates.static = 0.4, 0.12, 0.3
	if t.counters {
		h.rates.partDel, h.rates.rangeDel, h.rates.rowDel, h.rates.cellDel, h.rates.tie = 0, 0, 0, 0, 0
	}
	// Token order, once: the same for every sstable.
	n := p.Partitions
	order := make([]int64, n)
	toks := make([]int64, n)
	var kb []byte
	for i := int64(0); i < n; i++ {
		kb = t.key(kb[:0], i)
		toks[i] = token.Murmur3.Token(kb).Int64()
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int64) int {
		if toks[a] != toks[b] {
			if toks[a] < toks[b] {
				return -1
			}
			return 1
		}
		return token.Murmur3.CompareKeys(t.key(nil, a), t.key(nil, b))
	})
	comp := o.Compression
	if comp == nil && !o.Uncompressed {
		comp = &writer.Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 16 << 10, MaxCompressedLength: 1<<31 - 1}
	}
	if o.Uncompressed {
		comp = nil
	}
	res := &HistoryResult{Partitions: n, Now: (h.w0+int64(h.n)*dayMicros)/1_000_000 + 3600}
	if o.Window > 0 {
		return h.windows(dir, o, order, comp, res)
	}
	for k := 0; k < h.n; k++ {
		w, err := writer.NewSSTableWriter(dir, writer.Config{Version: o.Version, Generation: strconv.Itoa(k + 1), Header: t.header,
			Schema: t.schema, Partitioner: stats.Murmur3Partitioner, Compression: comp, ColumnIndexSize: o.ColumnIndexSize, ExpectedKeys: n})
		if err != nil {
			return nil, err
		}
		if k == 0 {
			res.Recovered = w.Staging().Recovered()
		}
		for i, pi := range order {
			if !h.holds(pi, k) {
				continue
			}
			if err := h.partition(w, pi, k, res); err != nil {
				w.Abort()
				return nil, err
			}
			if o.Progress != nil && i%256 == 0 {
				o.Progress(int64(k)*n+int64(i), int64(h.n)*n)
			}
		}
		path, err := w.Finish()
		if err != nil {
			return nil, err
		}
		res.DataPaths = append(res.DataPaths, path)
	}
	return res, nil
}

// first is the day partition p is first written: half of them on day 0.
func (h *history) first(p int64) int {
	x := h.t.h(30, uint64(p), 0, 0)
	if x&1 == 0 {
		return 0
	}
	return int((x >> 1) % uint64(h.n))
}

// holds says whether day k's sstable has a version of partition p.
func (h *history) holds(p int64, k int) bool {
	f := h.first(p)
	return k == f || k > f && unit(h.t.h(31, uint64(p), uint64(k), 0)) < 0.6
}

func (h *history) day(k int) int64 { return h.w0 + int64(k)*dayMicros }

// dataTS is the timestamp of row r's writes on day k; deletions of day k
// come before every write of the day.
func (h *history) dataTS(k int, r int64) int64 { return h.day(k) + 500_000 + r }

func seconds(us int64) int64 { return us / 1_000_000 }

func (h *history) rows(p int64) int64 { return h.t.rowsIn(p) }

// partition writes day k's version of partition p.
func (h *history) partition(w *writer.SSTableWriter, p int64, k int, res *HistoryResult) error {
	t := h.t
	up, uk := uint64(p), uint64(k)
	h.key = t.key(h.key[:0], p)
	first := k == h.first(p)
	kind := unit(t.h(32, up, uk, 0))
	partDel, rangeDel, tie := false, false, false
	if !first {
		switch {
		case kind < h.rates.partDel:
			partDel = true
		case kind < h.rates.partDel+h.rates.rangeDel:
			rangeDel = true
		case kind < h.rates.partDel+h.rates.rangeDel+h.rates.tie:
			tie = true
		}
	}
	del := deletiontime.Live
	if partDel {
		at := h.day(k) + 1000
		del = deletiontime.DeletionTime{MarkedForDeleteAt: at, LocalDeletionTime: seconds(at)}
	}
	// The day's partition is gathered first: a memtable flushes no
	// partition that nothing was written to.
	h.vals = h.vals[:0]
	var static *rows.Unfiltered
	if len(t.static) > 0 && (first || unit(t.h(33, up, uk, 0)) < h.rates.static) {
		u := h.reset(rows.KindStaticRow)
		ts := h.day(k) + 400_000
		h.cells = h.cells[:0]
		for ci, c := range t.static {
			h.cells = h.valueCells(h.cells, c, ci, up, 1<<40, uk, ts, 0, first)
		}
		u.Cells = h.cells
		static = u.Clone()
	}
	n := h.rows(p)
	span := n
	if !first {
		span = n + 2 // later days may add rows
	}
	// A range deletion: from row lo to row hi (inclusive or not), or to
	// the partition's end (DELETE ... WHERE ck >= x: an end bound of no
	// values); with several clustering columns often on the first alone
	// (a prefix: WHERE ck1 = x, ck1 <= y).
	lo, hi, hiIncl, toEnd := int64(-1), int64(-1), true, false
	if rangeDel && span >= 2 {
		lo = int64(t.h(34, up, uk, 0) % uint64(span))
		hi = lo + int64(t.h(35, up, uk, 0)%uint64(span-lo))
		hiIncl = t.h(36, up, uk, 0)&1 == 0 || hi == lo
		toEnd = t.h(57, up, uk, 0)%4 == 0
	}
	prefix := len(t.ck) >= 2 && t.h(56, up, uk, 0)&1 == 0
	rangeAt := h.day(k) + 2000
	bound := func(r int64, kind clustering.Kind) *rows.Unfiltered { return h.marker(r, kind, rangeAt, prefix) }
	var items []*rows.Unfiltered
	for r := int64(0); r < span; r++ {
		if r == lo {
			items = append(items, bound(r, clustering.InclStartBound))
		}
		if r == hi && !hiIncl && !toEnd {
			items = append(items, bound(r, clustering.ExclEndBound))
		}
		h.vals = h.vals[:0]
		if u, ok := h.row(p, r, k, first, tie); ok {
			items = append(items, u.Clone())
		}
		if r == hi && hiIncl && !toEnd {
			items = append(items, bound(r, clustering.InclEndBound))
		}
	}
	if toEnd {
		items = append(items, bound(-1, clustering.InclEndBound))
	}
	if del.IsLive() && static == nil && len(items) == 0 {
		return nil
	}
	if err := w.StartPartition(h.key, del); err != nil {
		return err
	}
	if static != nil {
		if err := w.AddStatic(static); err != nil {
			return err
		}
	}
	for _, u := range items {
		if err := w.Add(u); err != nil {
			return err
		}
		if u.Kind == rows.KindRow {
			res.Rows++
		}
	}
	return w.EndPartition()
}

func (h *history) reset(k rows.Kind) *rows.Unfiltered {
	h.u = rows.Unfiltered{Kind: k, Cells: h.u.Cells[:0], ComplexDeletions: h.u.ComplexDeletions[:0], Deletion: deletiontime.Live}
	return &h.u
}

func (h *history) clustering(r int64) [][]byte {
	h.clust = h.clust[:0]
	for _, c := range h.t.ck {
		at := len(h.vals)
		h.vals = appendValue(h.vals, c, uint64(r), true)
		h.clust = append(h.clust, h.vals[at:len(h.vals):len(h.vals)])
	}
	return h.clust
}

// marker is a range tombstone bound at row r's clustering (its first value
// alone with prefix; no value at all, the partition's end, for r < 0).
func (h *history) marker(r int64, kind clustering.Kind, at int64, prefix bool) *rows.Unfiltered {
	bound := [][]byte{}
	for i, c := range h.t.ck {
		if r < 0 || prefix && i > 0 {
			break
		}
		bound = append(bound, appendValue(nil, c, uint64(r), true))
	}
	d := deletiontime.DeletionTime{MarkedForDeleteAt: at, LocalDeletionTime: seconds(at)}
	return &rows.Unfiltered{Kind: rows.KindMarker, Bound: clustering.Prefix{Kind: kind, Values: bound}, Deletion: d}
}

// row builds day k's version of row r, false when the day does not touch
// it.
func (h *history) row(p, r int64, k int, first, tie bool) (*rows.Unfiltered, bool) {
	t := h.t
	up, ur, uk := uint64(p), uint64(r), uint64(k)
	if !h.written(p, r, k) {
		return nil, false
	}
	u := h.reset(rows.KindRow)
	u.Clustering = h.clustering(r)
	ts := h.dataTS(k, r)
	h.cells = h.cells[:0]
	if t.counters {
		for ci := range t.regular {
			h.cells = append(h.cells, rows.Cell{Column: ci, Timestamp: ts, Value: h.counterValue(ci, p, r, k)})
		}
		u.Cells = h.cells
		return u, len(u.Cells) > 0
	}
	if tie {
		return h.tieRow(u, p, r, k)
	}
	action := unit(t.h(38, up, ur, uk))
	if first {
		action = 1 // an INSERT of every column
	}
	switch {
	case action < h.rates.rowDel:
		at := h.day(k) + 3000 + r
		u.Deletion = deletiontime.DeletionTime{MarkedForDeleteAt: at, LocalDeletionTime: seconds(at)}
		if t.h(39, up, ur, uk)%3 != 0 {
			u.Flags |= rows.FlagHasDeletion
			return u, true // deleted only
		}
		u.Flags |= rows.FlagHasDeletion // deleted, then written again the same day
	case action < h.rates.rowDel+h.rates.cellDel:
		for ci, c := range t.regular {
			switch del := t.h(40, up, ur, uk<<8|uint64(ci))%2 == 0; {
			case !c.isMulti && del: // DELETE col
				h.cells = append(h.cells, rows.Cell{Column: ci, Timestamp: ts, Flags: rows.CellFlagDeleted, LocalDeletionTime: seconds(ts)})
			case c.isMulti && del: // DELETE col: the whole collection
				u.ComplexDeletions = append(u.ComplexDeletions, rows.ComplexDeletion{Column: ci,
					Deletion: deletiontime.DeletionTime{MarkedForDeleteAt: ts, LocalDeletionTime: seconds(ts)}})
			case c.isMulti && unit(t.h(41, up, ur, uk<<8|uint64(ci))) < h.rates.collection: // DELETE col[key]
				h.cells = h.elementTombstones(h.cells, c, ci, up, ur, uk, ts)
			}
		}
		u.Cells = h.cells
		return u, len(u.Cells) > 0 || len(u.ComplexDeletions) > 0
	}
	ttl := int64(0)
	if unit(t.h(42, up, ur, uk)) < t.shares.ttl {
		ttl = h.longT
		if t.h(43, up, ur, uk)&1 == 0 {
			ttl = h.shortT
		}
	}
	insert := first || t.h(44, up, ur, uk)&1 == 0
	if insert {
		u.Liveness = rows.Liveness{HasTimestamp: true, Timestamp: ts}
		if ttl != 0 {
			u.Liveness.TTL, u.Liveness.LocalExpirationTime = ttl, seconds(ts)+ttl
		}
	}
	for ci, c := range t.regular {
		if !insert && t.h(45, up, ur, uk<<8|uint64(ci))%5 < 2 {
			continue // an UPDATE sets some columns
		}
		replace := first || unit(t.h(46, up, ur, uk<<8|uint64(ci))) >= h.rates.collection
		h.cells = h.valueCells(h.cells, c, ci, up, ur, uk, ts, ttl, replace)
		if c.isMulti && replace && !first && t.h(47, up, ur, uk<<8|uint64(ci))&1 == 0 {
			// SET col = {...}: the old collection is deleted first.
			at := ts - 1
			u.ComplexDeletions = append(u.ComplexDeletions, rows.ComplexDeletion{Column: ci,
				Deletion: deletiontime.DeletionTime{MarkedForDeleteAt: at, LocalDeletionTime: seconds(at)}})
		}
	}
	u.Cells = h.cells
	return u, u.Liveness.HasTimestamp || u.HasDeletion() || len(u.Cells) > 0 || len(u.ComplexDeletions) > 0
}

// tieRow writes cells of row r with the timestamp of their first version:
// another value, a tombstone or an expiring cell, each a tie for the
// merge to break.
func (h *history) tieRow(u *rows.Unfiltered, p, r int64, k int) (*rows.Unfiltered, bool) {
	t := h.t
	up, ur, uk := uint64(p), uint64(r), uint64(k)
	if r >= h.rows(p) {
		return nil, false
	}
	ts := h.dataTS(h.first(p), r)
	for ci, c := range t.regular {
		if c.isMulti {
			continue
		}
		switch t.h(48, up, ur, uk<<8|uint64(ci)) % 4 {
		case 0: // another value
			h.cells = h.valueCells(h.cells, c, ci, up, ur, uk, ts, 0, true)
		case 1: // a tombstone
			h.cells = append(h.cells, rows.Cell{Column: ci, Timestamp: ts, Flags: rows.CellFlagDeleted, LocalDeletionTime: seconds(h.day(k))})
		case 2: // the same value, expiring
			h.cells = h.valueCells(h.cells, c, ci, up, ur, uint64(h.first(p)), ts, h.longT, true)
		}
	}
	u.Cells = h.cells
	return u, len(u.Cells) > 0
}

// valueCells appends column c's cells of a write on day k: a value, or
// the elements of a collection (replace: a fresh set of them; else one
// added).
func (h *history) valueCells(dst []rows.Cell, c *colType, ci int, p, r, k uint64, ts, ttl int64, replace bool) []rows.Cell {
	t := h.t
	cell := rows.Cell{Column: ci, Timestamp: ts}
	if ttl != 0 {
		cell.Flags = rows.CellFlagExpiring
		cell.TTL, cell.LocalDeletionTime = ttl, seconds(ts)+ttl
	}
	if !c.isMulti {
		at := len(h.vals)
		h.vals = appendValue(h.vals, c, t.h(50, p, r, uint64(ci)<<40|k), false)
		cell.Value = h.vals[at:len(h.vals):len(h.vals)]
		return append(dst, cell)
	}
	count := c.count.Sample(unit(t.h(51, p, r, uint64(ci))))
	from, to := int64(0), count
	if !replace {
		from, to = count+int64(k), count+int64(k)+1 // one element more
	}
	start := len(dst)
	for e := from; e < to; e++ {
		cl := cell
		cl.Path = h.path(c, p, r, ci, e)
		switch c.kind {
		case "list":
			cl.Value = h.elemValue(c.elem, p, r, ci, e, k)
		case "set":
			cl.Value = emptyValue
		case "map":
			cl.Value = h.elemValue(c.elem, p, r, ci, e, k)
		}
		dst = append(dst, cl)
	}
	return sortPaths(dst, start, c)
}

// elementTombstones deletes one element of the collection's first
// version (DELETE col[key] / col = col - {elem}).
func (h *history) elementTombstones(dst []rows.Cell, c *colType, ci int, p, r, k uint64, ts int64) []rows.Cell {
	count := c.count.Sample(unit(h.t.h(51, p, r, uint64(ci))))
	if count == 0 {
		return dst
	}
	e := int64(h.t.h(52, p, r, k) % uint64(count))
	return append(dst, rows.Cell{Column: ci, Timestamp: ts, Flags: rows.CellFlagDeleted, LocalDeletionTime: seconds(ts), Path: h.path(c, p, r, ci, e), Value: emptyValue})
}

var emptyValue = []byte{}

// path is element e's cell path: the same on every day, so that later
// days overwrite and delete elements of earlier ones.
func (h *history) path(c *colType, p, r uint64, ci int, e int64) []byte {
	at := len(h.vals)
	switch c.kind {
	case "list":
		h.vals = appendValue(h.vals, &colType{kind: "timeuuid"}, uint64(e)+1, true)
	case "set":
		h.vals = appendValue(h.vals, c.elem, h.t.h(53, p, r, uint64(ci)<<32|uint64(e)), false)
	case "map":
		h.vals = appendValue(h.vals, c.key, h.t.h(53, p, r, uint64(ci)<<32|uint64(e)), false)
	}
	return h.vals[at:len(h.vals):len(h.vals)]
}

func (h *history) elemValue(c *colType, p, r uint64, ci int, e int64, k uint64) []byte {
	at := len(h.vals)
	h.vals = appendValue(h.vals, c, h.t.h(54, p, r, uint64(ci)<<40|uint64(e)<<20|k), false)
	return h.vals[at:len(h.vals):len(h.vals)]
}

// sortPaths sorts the cells from start by path and drops repeated paths.
func sortPaths(cells []rows.Cell, start int, c *colType) []rows.Cell {
	cmp := pathComparator(c)
	elems := cells[start:]
	slices.SortStableFunc(elems, func(a, b rows.Cell) int { return cmp(a.Path, b.Path) })
	elems = slices.CompactFunc(elems, func(a, b rows.Cell) bool { return cmp(a.Path, b.Path) == 0 })
	return cells[:start+len(elems)]
}

// The three counter nodes' ids (counterID 0..2), and a pre-2.1 local
// shard's.
const (
	counterNodes = 3
	legacyNode   = 9
)

// written says whether day k writes row r of partition p: every row of
// the first day, a third of them (and a few new ones) on later days that
// hold the partition.
func (h *history) written(p, r int64, k int) bool {
	f := h.first(p)
	switch {
	case !h.holds(p, k):
		return false
	case k == f:
		return r < h.rows(p)
	}
	prob := 0.35
	if r >= h.rows(p) {
		prob = 0.2
	}
	return unit(h.t.h(37, uint64(p), uint64(r), uint64(k))) < prob
}

// counterValue is day k's counter context of row r's column ci: for every
// node that updated the counter that day, its shard with the clock and
// count it had reached (a counter write carries its node's running
// total); node 2 writes remote shards for some counters, and some days
// add a pre-2.1 local shard of the day's increments, which merging adds
// up.
func (h *history) counterValue(ci int, p, r int64, k int) []byte {
	t := h.t
	up, ur, uc := uint64(p), uint64(r), uint64(ci)
	var shards []counterShard
	remote := t.h(60, up, ur, uc)%4 == 0
	for node := uint64(0); node < counterNodes; node++ {
		var clock, count int64
		today := false
		for j := h.first(p); j <= k; j++ {
			if !h.written(p, r, j) {
				continue
			}
			today = false
			if node != 0 && t.h(61, up, ur, uint64(j)<<16|uc<<8|node)%3 == 0 {
				continue // node 0 updates every time; the others now and then
			}
			clock++
			count += int64(t.h(62, up, ur, uint64(j)<<16|uc<<8|node)%7) - 1
			today = j == k
		}
		if today {
			shards = append(shards, counterShard{id: counterID(node), clock: clock, count: count, global: !(remote && node == 2)})
		}
	}
	if t.h(63, up, ur, uint64(k)<<8|uc)%5 == 0 {
		shards = append(shards, counterShard{id: counterID(legacyNode), clock: 1, count: int64(t.h(64, up, ur, uint64(k)<<8|uc) % 10), local: true})
	}
	return appendCounter(nil, shards)
}
