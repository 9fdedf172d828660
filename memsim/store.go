package memsim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sstabletool/sstabletool/memsim/internal/jvm"
	"github.com/sstabletool/sstabletool/workload"
)

const noTime = math.MinInt64 // markedForDeleteAt of a live DeletionTime; "no liveness" timestamp

type partition struct {
	rows     uint32 // first of nrows sorted row ids in store.rowIdx, or index into store.bigRows
	nrows    uint32
	rowsCap  uint32
	static   uint32 // static row id + 1, 0 when absent
	tomb     uint32 // partition deletion and range tombstones in store.tombs, 0 when none
	colmask  uint64 // columns seen (ids 0..63); higher ids are counted in regular/static only
	regular  uint16
	statics  uint16
	hasStats bool
}

type row struct {
	clust    bref // clustering values: uvarint length + bytes each
	ts       int64
	let      int64
	tomb     uint32 // row deletion in store.tombs, 0 when live
	cells    uint32 // first of ncells cells in store.cells (sorted by column, path), or index into store.bigCells
	ncells   uint32
	capCells uint32
	ttl      int32
	ncomp    uint16 // clustering components
}

const (
	cellTombstone = 1 << iota
	cellHasPath
)

// tomb holds the deletions of a partition or row. Few have any, so they
// live apart from the partitions and rows.
type tomb struct {
	at, ldt  int64 // markedForDeleteAt, localDeletionTime; at is noTime when live
	rts      uint32
	rtBounds int64 // heap of the range tombstones' cloned bounds
}

// cdel is a complex column's deletion (ComplexColumnData.complexDeletion).
type cdel struct {
	col     uint16
	at, ldt int64
}

type cell struct {
	val, path bref
	ts, ldt   int64
	ttl       int32
	col       uint16
	flags     uint8
}

// store holds partitions, rows and cells for one memtable variant and
// applies updates to them the way AtomicBTreePartition/BTreePartitionUpdater
// merge a PartitionUpdate, reporting every size change to an Account.
type store struct {
	parts    pool[partition]
	rows     pool[row]
	rowIdx   pool[uint32]
	cells    pool[cell]
	tombs    pool[tomb]
	bigRows  [][]uint32
	bigCells [][]cell
	data     arena
	// Complex (collection) column deletions by row id. Only sstables
	// replayed with --from-sstable have them, so a map costs nothing
	// elsewhere.
	cdels            map[uint32][]cdel
	complexDeletions int64 // complex deletions applied (not superseded)

	schema   *workload.Schema
	isStatic []bool
	complex  []bool
	acct     *Account

	scratchLens []int64
	scratchCl   []byte
}

func newStore(schema *workload.Schema, acct *Account) *store {
	s := &store{schema: schema, acct: acct}
	for _, c := range schema.Columns {
		s.isStatic = append(s.isStatic, c.Static)
		s.complex = append(s.complex, c.Complex)
	}
	s.parts.alloc(1) // id 0 is never a partition, so 0 can mean "none"
	s.rows.alloc(1)
	s.tombs.alloc(1)
	return s
}

// newPartition creates an empty partition and returns its id. The
// partition maps keep the keys (see keyStore); the rows need none.
func (s *store) newPartition() uint32 {
	id := s.parts.alloc(1)
	*s.parts.at(id) = partition{}
	return id
}

var liveTomb = tomb{at: noTime, ldt: noTime}

// deletion returns the tomb at i (liveTomb for 0).
func (s *store) deletion(i uint32) *tomb {
	if i == 0 {
		return &liveTomb
	}
	return s.tombs.at(i)
}

// tombOf returns the tomb at *i, creating a live one first if needed.
func (s *store) tombOf(i *uint32) *tomb {
	if *i == 0 {
		*i = s.tombs.alloc(1)
		*s.tombs.at(*i) = liveTomb
	}
	return s.tombs.at(*i)
}

func (s *store) rowIDs(p *partition) []uint32 {
	if p.rowsCap > chunkLen {
		return s.bigRows[p.rows][:p.nrows]
	}
	if p.nrows == 0 {
		return nil
	}
	return s.rowIdx.block(p.rows, int(p.nrows))
}

func (s *store) rowCells(r *row) []cell {
	if r.capCells > chunkLen {
		return s.bigCells[r.cells][:r.ncells]
	}
	if r.ncells == 0 {
		return nil
	}
	return s.cells.block(r.cells, int(r.ncells))
}

// encodeClustering packs clustering values into scratch.
func (s *store) encodeClustering(vals [][]byte) []byte {
	b := s.scratchCl[:0]
	for _, v := range vals {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	s.scratchCl = b
	return b
}

// compareClustering orders encoded clusterings component by component,
// each by unsigned bytes (shorter first on a tie). Cassandra orders by
// each column's type; only the order differs, never what is stored.
func compareClustering(a, b []byte) int {
	for len(a) > 0 && len(b) > 0 {
		la, na := binary.Uvarint(a)
		lb, nb := binary.Uvarint(b)
		va, vb := a[na:na+int(la)], b[nb:nb+int(lb)]
		if c := bytes.Compare(va, vb); c != 0 {
			return c
		}
		a, b = a[na+int(la):], b[nb+int(lb):]
	}
	return len(a) - len(b)
}

// findRow binary-searches a partition's rows.
func (s *store) findRow(p *partition, cl []byte) (int, bool) {
	ids := s.rowIDs(p)
	lo, hi := 0, len(ids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := compareClustering(s.data.get(&s.rows.at(ids[m]).clust), cl)
		if c == 0 {
			return m, true
		}
		if c < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, false
}

// insertRowID puts id at position pos of the partition's sorted rows,
// growing the block by doubling (old blocks are abandoned, as a copying
// BTree update abandons its old leaves).
func (s *store) insertRowID(p *partition, pos int, id uint32) {
	n := int(p.nrows)
	if p.nrows == p.rowsCap {
		newCap := max(1, 2*int(p.rowsCap))
		old := s.rowIDs(p)
		if newCap > chunkLen {
			nb := make([]uint32, n, newCap)
			copy(nb, old)
			if p.rowsCap > chunkLen {
				s.bigRows[p.rows] = nb
			} else {
				s.bigRows = append(s.bigRows, nb)
				p.rows = uint32(len(s.bigRows) - 1)
			}
		} else {
			start := s.rowIdx.alloc(newCap)
			copy(s.rowIdx.block(start, newCap), old)
			p.rows = start
		}
		p.rowsCap = uint32(newCap)
	}
	if p.rowsCap > chunkLen {
		s.bigRows[p.rows] = append(s.bigRows[p.rows], 0)
	}
	p.nrows++
	ids := s.rowIDs(p)
	copy(ids[pos+1:], ids[pos:n])
	ids[pos] = id
}

// insertCell puts c at position pos of the row's sorted cells.
func (s *store) insertCell(r *row, pos int, c cell) {
	n := int(r.ncells)
	if r.ncells == r.capCells {
		newCap := max(1, 2*int(r.capCells))
		old := s.rowCells(r)
		if newCap > chunkLen {
			nb := make([]cell, n, newCap)
			copy(nb, old)
			if r.capCells > chunkLen {
				s.bigCells[r.cells] = nb
			} else {
				s.bigCells = append(s.bigCells, nb)
				r.cells = uint32(len(s.bigCells) - 1)
			}
		} else {
			start := s.cells.alloc(newCap)
			copy(s.cells.block(start, newCap), old)
			r.cells = start
		}
		r.capCells = uint32(newCap)
	}
	if r.capCells > chunkLen {
		s.bigCells[r.cells] = append(s.bigCells[r.cells], cell{})
	}
	r.ncells++
	cs := s.rowCells(r)
	copy(cs[pos+1:], cs[pos:n])
	cs[pos] = c
}

func compareCell(col uint16, path []byte, c *cell, a *arena) int {
	if col != c.col {
		if col < c.col {
			return -1
		}
		return 1
	}
	return bytes.Compare(path, a.get(&c.path))
}

func (s *store) findCell(r *row, col uint16, path []byte) (int, bool) {
	cs := s.rowCells(r)
	lo, hi := 0, len(cs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := compareCell(col, path, &cs[m], &s.data)
		if c == 0 {
			return m, true
		}
		if c > 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, false
}

// cellData is AbstractCell.dataSize.
func (s *store) cellData(value, path int) int64 {
	return 8 + 4 + s.acct.L.DeletionTimeDataSize + int64(value) + int64(path)
}

// wins reports whether the update cell supersedes the existing one, as
// Cells.reconcile decides: the higher timestamp; on a tie a tombstone, then
// an expiring cell, then the greater value.
func (s *store) wins(u *workload.Cell, e *cell) bool {
	if u.Timestamp != e.ts {
		return u.Timestamp > e.ts
	}
	et := e.flags&cellTombstone != 0
	if u.Tombstone != et {
		return u.Tombstone
	}
	if (u.TTL != 0) != (e.ttl != 0) {
		return u.TTL != 0
	}
	if u.LocalDeletionTime != e.ldt {
		return u.LocalDeletionTime > e.ldt
	}
	return bytes.Compare(u.Value, s.data.get(&e.val)) > 0
}

// errTooLarge is returned for values Cassandra itself could not hold.
var errTooLarge = fmt.Errorf("value larger than 2 GiB")

// apply merges one write into partition id (created reports whether the
// partition was just added) and accounts every change.
func (s *store) apply(id uint32, op *workload.Op) error {
	a := s.acct
	l := &a.L
	p := s.parts.at(id)
	var heap int64

	// Columns of the update (PartitionUpdate.columns) merged into the partition's.
	var mask uint64
	var reg, sta int
	for _, cd := range op.ComplexDeletions {
		if c := cd.Column; c < 0 || c >= len(s.isStatic) || !s.complex[c] {
			return fmt.Errorf("complex deletion of column %d: not a complex column of the schema's %d", c, len(s.isStatic))
		}
	}
	ncols := len(op.Cells) + len(op.ComplexDeletions)
	for i := 0; i < ncols; i++ {
		var c int
		if i < len(op.Cells) {
			c = op.Cells[i].Column
		} else {
			c = op.ComplexDeletions[i-len(op.Cells)].Column
		}
		if c < 0 || c >= len(s.isStatic) {
			return fmt.Errorf("cell column %d: schema has %d columns", c, len(s.isStatic))
		}
		if c < 64 {
			mask |= 1 << uint(c)
		} else if s.isStatic[c] {
			sta = 1
		} else {
			reg = 1
		}
	}
	if mask&^p.colmask != 0 || int(p.regular) < reg || int(p.statics) < sta {
		before := columnsHeap(l, int64(p.regular), int64(p.statics))
		for c := 0; c < 64 && c < len(s.isStatic); c++ {
			if mask&^p.colmask&(1<<uint(c)) != 0 {
				if s.isStatic[c] {
					p.statics++
				} else {
					p.regular++
				}
			}
		}
		p.colmask |= mask
		p.regular = max(p.regular, uint16(reg))
		p.statics = max(p.statics, uint16(sta))
		heap += columnsHeap(l, int64(p.regular), int64(p.statics)) - before
	}
	if !p.hasStats {
		heap += l.EncodingStats
		p.hasStats = true
	}

	// Partition-level deletion info.
	switch op.Deletion {
	case workload.DelPartition:
		if op.DeletedAt > s.deletion(p.tomb).at {
			before := s.deletionInfoHeap(p)
			t := s.tombOf(&p.tomb)
			t.at, t.ldt = op.DeletedAt, op.LocalDeletionTime
			heap += s.deletionInfoHeap(p) - before
		}
	case workload.DelRange:
		before := s.deletionInfoHeap(p)
		t := s.tombOf(&p.tomb)
		t.rts++
		t.rtBounds += boundHeap(l, op.Clustering) + boundHeap(l, op.RangeEnd)
		heap += s.deletionInfoHeap(p) - before
	}

	// Static row: cells of static columns, or the whole op when Static.
	var hasStatic, hasRegular bool
	for i := range op.Cells {
		if s.isStatic[op.Cells[i].Column] {
			hasStatic = true
		} else {
			hasRegular = true
		}
	}
	for _, cd := range op.ComplexDeletions {
		if s.isStatic[cd.Column] {
			hasStatic = true
		} else {
			hasRegular = true
		}
	}
	if hasStatic {
		h, err := s.mergeRow(p, op, true)
		if err != nil {
			return err
		}
		heap += h
	}
	if !op.Static && op.Deletion != workload.DelPartition && op.Deletion != workload.DelRange &&
		(hasRegular || op.HasLiveness || op.Deletion == workload.DelRow) {
		if len(op.Clustering) != len(s.schema.Clustering) && len(s.schema.Clustering) > 0 {
			return fmt.Errorf("row has %d clustering values, schema has %d", len(op.Clustering), len(s.schema.Clustering))
		}
		h, err := s.mergeRow(p, op, false)
		if err != nil {
			return err
		}
		heap += h
	}
	a.heap(heap)
	return nil
}

func (s *store) deletionInfoHeap(p *partition) int64 {
	t := s.deletion(p.tomb)
	if t.at == noTime && t.rts == 0 {
		return 0
	}
	l := &s.acct.L
	h := l.MutableDeletionInfo
	if t.at != noTime {
		h += l.DeletionTime
	}
	return h + rangeTombstonesHeap(l, int64(t.rts), t.rtBounds)
}

// mergeRow inserts or merges the op's static or regular row and returns
// the heap change that is the same for every allocation type; clustering
// and cells are accounted per type directly.
func (s *store) mergeRow(p *partition, op *workload.Op, static bool) (int64, error) {
	a := s.acct
	l := &a.L
	var rid uint32
	var pos int
	var found bool
	var cl []byte
	if static {
		found = p.static != 0
		rid = p.static - 1
	} else {
		cl = s.encodeClustering(op.Clustering)
		pos, found = s.findRow(p, cl)
		if found {
			rid = s.rowIDs(p)[pos]
		}
	}
	var heap int64
	if !found {
		rid = s.rows.alloc(1)
		r := s.rows.at(rid)
		*r = row{ts: noTime, ncomp: uint16(len(op.Clustering))}
		if !static {
			r.clust = s.data.put(cl)
			lens := s.scratchLens[:0]
			for _, v := range op.Clustering {
				lens = append(lens, int64(len(v)))
			}
			s.scratchLens = lens
			a.clustering(1, lens, false)
			var data int64
			for _, n := range lens {
				data += n
			}
			a.Live += data
		}
		// LivenessInfo.EMPTY and Deletion.LIVE still count in dataSize().
		a.Live += 8 + l.DeletionTimeDataSize + 1 + 8
		heap += l.BTreeRow
		if !static && op.HasLiveness {
			r.ts, r.ttl, r.let = op.Timestamp, op.TTL, op.LocalExpirationTime
			if op.TTL != 0 {
				heap += l.ExpiringLiveness
				a.Live += 4 + l.DeletionTimeDataSize
			} else {
				heap += l.LivenessInfo
			}
		}
		if !static && op.Deletion == workload.DelRow {
			t := s.tombOf(&r.tomb)
			t.at, t.ldt = op.DeletedAt, op.LocalDeletionTime
			heap += l.RowDeletion + l.DeletionTime
		}
		if static {
			p.static = rid + 1
		} else {
			before := jvm.BTreeBuilt(int64(p.nrows))
			s.insertRowID(p, pos, rid)
			heap += jvm.BTreeBuilt(int64(p.nrows)) - before
		}
	} else {
		r := s.rows.at(rid)
		if !static && op.HasLiveness && op.Timestamp > r.ts {
			r.ts, r.ttl, r.let = op.Timestamp, op.TTL, op.LocalExpirationTime
		}
		if !static && op.Deletion == workload.DelRow && op.DeletedAt > s.deletion(r.tomb).at {
			t := s.tombOf(&r.tomb)
			t.at, t.ldt = op.DeletedAt, op.LocalDeletionTime
			if r.ts <= t.at {
				r.ts = noTime
			}
			// Shadowed cells leave the row (ColumnData.Reconciler.retain):
			// their objects are released, their cloned bytes are not.
			cs := s.rowCells(r)
			kept := cs[:0]
			for i := range cs {
				c := cs[i]
				if c.ts <= t.at {
					a.cell(-1, int64(c.val.n), int64(c.path.n), c.flags&cellHasPath != 0)
					a.Live -= s.cellData(int(c.val.n), int(c.path.n))
					continue
				}
				kept = append(kept, c)
			}
			r.ncells = uint32(len(kept))
		}
	}
	r := s.rows.at(rid)
	rowDel := s.deletion(r.tomb).at
	for _, cd := range op.ComplexDeletions {
		if s.isStatic[cd.Column] == static && cd.DeletedAt > rowDel {
			heap += s.deleteComplex(rid, uint16(cd.Column), cd.DeletedAt, cd.LocalDeletionTime)
		}
	}
	r = s.rows.at(rid)
	for i := range op.Cells {
		u := &op.Cells[i]
		if s.isStatic[u.Column] != static {
			continue
		}
		if len(u.Value) > math.MaxInt32 || len(u.Path) > math.MaxInt32 {
			return 0, errTooLarge
		}
		if u.Timestamp <= rowDel {
			continue // shadowed by the row deletion, dropped on merge
		}
		if s.complex[u.Column] && u.Timestamp <= s.complexDeletion(rid, uint16(u.Column)) {
			continue // shadowed by the collection's deletion
		}
		col := uint16(u.Column)
		hasPath := s.complex[u.Column]
		var path []byte
		if hasPath {
			path = u.Path
		}
		cpos, exists := s.findCell(r, col, path)
		if exists {
			e := &s.rowCells(r)[cpos]
			if !s.wins(u, e) {
				continue
			}
			a.cell(-1, int64(e.val.n), int64(e.path.n), hasPath)
			a.cell(1, int64(len(u.Value)), int64(len(path)), hasPath)
			a.Live += s.cellData(len(u.Value), len(path)) - s.cellData(int(e.val.n), int(e.path.n))
			s.setCell(e, u, col, path, hasPath)
			continue
		}
		// A new cell: its ColumnData joins the row's column tree, or the
		// complex column's cell tree grows.
		cols, elems, exists := s.columnShape(rid, r, col)
		if hasPath {
			if !exists {
				heap += l.ComplexColumnData + jvm.BTreeLeaf(1) + jvm.BTreeLeaf(int64(cols+1)) - jvm.BTreeLeaf(int64(cols))
				a.Live += 12 // complex deletion
			} else {
				heap += jvm.BTreeBuilt(int64(elems+1)) - jvm.BTreeBuilt(int64(elems))
			}
		} else {
			heap += jvm.BTreeBuilt(int64(cols+1)) - jvm.BTreeBuilt(int64(cols))
		}
		a.cell(1, int64(len(u.Value)), int64(len(path)), hasPath)
		a.Live += s.cellData(len(u.Value), len(path))
		var c cell
		s.setCell(&c, u, col, path, hasPath)
		if r.ncells >= math.MaxUint32-1 {
			return 0, fmt.Errorf("row holds too many cells")
		}
		s.insertCell(r, cpos, c)
		r = s.rows.at(rid)
	}
	return heap, nil
}

// columnShape returns how many columns a row holds, how many cells the
// given column holds and whether the row holds the column (a complex
// column can be there with a deletion and no cells).
func (s *store) columnShape(rid uint32, r *row, col uint16) (cols, elems int, exists bool) {
	last := -1
	for _, c := range s.rowCells(r) {
		if int(c.col) != last {
			cols++
			last = int(c.col)
		}
		if c.col == col {
			elems++
		}
	}
	for _, d := range s.cdels[rid] {
		if !s.rowHasCells(r, d.col) {
			cols++
		}
		if d.col == col {
			exists = true
		}
	}
	return cols, elems, exists || elems > 0
}

func (s *store) rowHasCells(r *row, col uint16) bool {
	for _, c := range s.rowCells(r) {
		if c.col == col {
			return true
		}
	}
	return false
}

// complexDeletion returns the markedForDeleteAt of a complex column's
// deletion in row rid, noTime when it has none.
func (s *store) complexDeletion(rid uint32, col uint16) int64 {
	for _, d := range s.cdels[rid] {
		if d.col == col {
			return d.at
		}
	}
	return noTime
}

// deleteComplex merges a complex column deletion into row rid, as
// ComplexColumnData.merge does: the newer deletion wins, the column's
// cells it shadows leave the row (their objects are released, their
// cloned bytes are not). A column the row did not hold becomes a
// ComplexColumnData without cells. It returns the heap change shared by
// every allocation type; the DeletionTime object itself is not charged
// (unsharedHeapSizeExcludingData leaves it out), its 12 bytes of data are.
func (s *store) deleteComplex(rid uint32, col uint16, at, ldt int64) int64 {
	a := s.acct
	l := &a.L
	r := s.rows.at(rid)
	var heap int64
	list := s.cdels[rid]
	j := -1
	for i := range list {
		if list[i].col == col {
			j = i
		}
	}
	if j >= 0 {
		if at <= list[j].at {
			return 0
		}
		list[j].at, list[j].ldt = at, ldt
	} else {
		cols, _, exists := s.columnShape(rid, r, col)
		if !exists {
			heap += l.ComplexColumnData + jvm.BTreeLeaf(int64(cols+1)) - jvm.BTreeLeaf(int64(cols))
			a.Live += 12
		}
		if s.cdels == nil {
			s.cdels = map[uint32][]cdel{}
		}
		s.cdels[rid] = append(list, cdel{col: col, at: at, ldt: ldt})
	}
	s.complexDeletions++
	cs := s.rowCells(r)
	kept := cs[:0]
	for i := range cs {
		c := cs[i]
		if c.col == col && c.ts <= at {
			a.cell(-1, int64(c.val.n), int64(c.path.n), c.flags&cellHasPath != 0)
			a.Live -= s.cellData(int(c.val.n), int(c.path.n))
			continue
		}
		kept = append(kept, c)
	}
	r.ncells = uint32(len(kept))
	return heap
}

func (s *store) setCell(c *cell, u *workload.Cell, col uint16, path []byte, hasPath bool) {
	*c = cell{val: s.data.put(u.Value), ts: u.Timestamp, ldt: u.LocalDeletionTime, ttl: u.TTL, col: col}
	if u.Tombstone {
		c.flags |= cellTombstone
	}
	if hasPath {
		c.path = s.data.put(path)
		c.flags |= cellHasPath
	}
}

// read visits every row and cell of partition id, like a full-partition
// SELECT, and returns the number of rows and the value bytes seen.
func (s *store) read(id uint32) (rows int, valueBytes int64) {
	p := s.parts.at(id)
	if p.static != 0 {
		for _, c := range s.rowCells(s.rows.at(p.static - 1)) {
			valueBytes += int64(len(s.data.get(&c.val)))
		}
	}
	for _, rid := range s.rowIDs(p) {
		r := s.rows.at(rid)
		if s.deletion(r.tomb).at >= s.deletion(p.tomb).at || s.deletion(p.tomb).at == noTime {
			rows++
		}
		for _, c := range s.rowCells(r) {
			valueBytes += int64(len(s.data.get(&c.val)))
		}
	}
	return rows, valueBytes
}

// goBytes is the memory the store's chunks hold.
func (s *store) goBytes() int64 {
	n := s.parts.bytes(int64(sizeofPartition)) + s.rows.bytes(int64(sizeofRow)) +
		s.rowIdx.bytes(4) + s.cells.bytes(int64(sizeofCell)) + s.data.bytes()
	for _, b := range s.bigRows {
		n += int64(cap(b)) * 4
	}
	for _, b := range s.bigCells {
		n += int64(cap(b)) * int64(sizeofCell)
	}
	return n
}
