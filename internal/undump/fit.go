package undump

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// A counter cell's context is not in the dump, only its total (the sum of
// its shards' counts). The context written has `shards` shards, the first
// `header` of them global (listed in the context's header, as Cassandra
// 2.1+ writes every shard it creates), the others remote (pre-2.1 data):
// shard i has the id counterID(i), the cell's timestamp as its clock, and
// the whole total in shard 0. By default, one global shard: what a counter
// updated through one coordinator holds.
type counterLayout struct{ shards, header int }

var defaultCounterLayout = counterLayout{1, 1}

// counterID is the id of the i-th shard written: a version-1 UUID,
// 53570000-0000-1000-8000-0000000000ii ("SW": sstabletool write), so that
// a written context is recognisable.
func counterID(i int) [16]byte {
	return [16]byte{0x53, 0x57, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0, 0, 0, 0, byte(i)}
}

// appendCounterContext appends a context of the layout holding total.
func appendCounterContext(dst []byte, l counterLayout, clock, total int64) []byte {
	shards := make([]cqltype.CounterShard, l.shards)
	for i := range shards {
		shards[i] = cqltype.CounterShard{ID: counterID(i), Clock: clock, Global: i < l.header}
	}
	if len(shards) > 0 {
		shards[0].Count = total
	}
	return cqltype.AppendCounterContext(dst, shards)
}

// counters turns the totals the reader gives counter cells into contexts.
type counters struct {
	u     rows.Unfiltered
	cells []rows.Cell
	buf   []byte
}

// contexts returns u with the context of each live counter cell in place
// of its total: the k-th counter cell of the run (k from k0) with
// layouts[k], or the default layout. u itself is left as it is (a run is
// sized with several layouts); the copy is valid until the next call.
func (c *counters) contexts(u *rows.Unfiltered, t *table, layouts []counterLayout, k0 int) (*rows.Unfiltered, int, error) {
	cols := t.Schema().Regular
	if u.Kind == rows.KindStaticRow {
		cols = t.Schema().Static
	}
	k := k0
	any := false
	for i := range u.Cells {
		if cols[u.Cells[i].Column].Counter && !u.Cells[i].IsTombstone() {
			any = true
			break
		}
	}
	if !any {
		return u, k, nil
	}
	c.u = *u
	c.cells = append(c.cells[:0], u.Cells...)
	c.u.Cells = c.cells
	c.buf = c.buf[:0]
	type ref struct{ cell, off, n int }
	var refs []ref
	for i := range c.cells {
		cell := &c.cells[i]
		if !cols[cell.Column].Counter || cell.IsTombstone() {
			continue
		}
		if len(cell.Value) != 8 {
			return nil, k, errors.New("a counter cell without its total")
		}
		l := defaultCounterLayout
		if k < len(layouts) {
			l = layouts[k]
		}
		k++
		total := int64(binary.BigEndian.Uint64(cell.Value))
		if l.shards == 0 && total != 0 {
			return nil, k, errors.New("a counter context without shards holds no total")
		}
		at := len(c.buf)
		c.buf = appendCounterContext(c.buf, l, cell.Timestamp, total)
		refs = append(refs, ref{i, at, len(c.buf) - at})
	}
	for _, r := range refs {
		c.cells[r.cell].Value = c.buf[r.off : r.off+r.n : r.off+r.n]
	}
	return &c.u, k, nil
}

// counterCells counts the live counter cells of a run.
func (a *attemptState) counterCells() int {
	n := 0
	for _, it := range a.run {
		cols := a.t.Schema().Regular
		if it.u.Kind == rows.KindStaticRow {
			cols = a.t.Schema().Static
		}
		for i := range it.u.Cells {
			if cols[it.u.Cells[i].Column].Counter && !it.u.Cells[i].IsTombstone() {
				n++
			}
		}
	}
	return n
}

// maxFitShards bounds the shards tried for a counter context (a context
// with more would be a counter updated through that many coordinators).
const maxFitShards = 8

// fitRun finds counter layouts that make the run take want bytes with
// enc: the default, then the same layout for every counter cell, then one
// layout for the first counter cell with the default for the others.
func (a *attemptState) fitRun(enc *rows.Encoder, want int64) ([]counterLayout, bool) {
	if n, err := a.runSize(enc, nil); err == nil && n == want {
		return nil, true
	}
	k := a.counterCells()
	if k == 0 {
		return nil, false
	}
	var candidates []counterLayout
	for s := 0; s <= maxFitShards; s++ {
		for h := s; h >= 0; h-- {
			candidates = append(candidates, counterLayout{s, h})
		}
	}
	try := func(ls []counterLayout) bool {
		n, err := a.runSize(enc, ls)
		return err == nil && n == want
	}
	uniform := make([]counterLayout, k)
	for _, l := range candidates {
		for i := range uniform {
			uniform[i] = l
		}
		if try(uniform) {
			return uniform, true
		}
	}
	first := make([]counterLayout, k)
	for i := range first {
		first[i] = defaultCounterLayout
	}
	for _, l := range candidates {
		first[0] = l
		if try(first) {
			return first, true
		}
	}
	return nil, false
}

// searchPlan looks for a header under which the run takes want bytes: a
// lower EncodingStats minimum (one of the run's timestamps, deletion
// times or TTLs less a vint width boundary, the nearest first), else the
// table's every column in the header. It returns the plan to restart
// with, or nil.
func (a *attemptState) searchPlan(want int64) *plan {
	var ts, ldt, ttl []int64
	for _, it := range a.run {
		collectAll(it.u, &ts, &ldt, &ttl)
	}
	sch := *a.t.Schema()
	h := a.plan.header
	type cand struct {
		dim int
		v   int64
	}
	var cands []cand
	add := func(dim int, vals []int64, cur int64) {
		var vs []int64
		for _, v := range vals {
			for w := 1; w <= 8; w++ {
				if m := v - int64(1)<<(7*w); m < cur {
					vs = append(vs, m)
				}
			}
		}
		slices.Sort(vs)
		vs = slices.Compact(vs)
		slices.Reverse(vs) // nearest the current minimum first
		for _, v := range vs {
			cands = append(cands, cand{dim, v})
		}
	}
	add(0, ts, h.MinTimestamp)
	add(1, ldt, h.MinLocalDeletionTime)
	add(2, ttl, h.MinTTL)
	for _, c := range cands {
		s := sch
		switch c.dim {
		case 0:
			s.MinTimestamp = c.v
		case 1:
			if c.v < 0 {
				continue
			}
			s.MinLocalDeletionTime = c.v
		case 2:
			if c.v < 0 {
				continue
			}
			s.MinTTL = c.v
		}
		if _, ok := a.fitRun(rows.NewEncoder(&s), want); ok {
			nh := *h
			nh.MinTimestamp, nh.MinLocalDeletionTime, nh.MinTTL = s.MinTimestamp, s.MinLocalDeletionTime, s.MinTTL
			p := a.plan
			p.header = &nh
			return &p
		}
	}
	if !a.plan.allColumns && (len(a.o.Header.RegularColumns) != len(h.RegularColumns) || len(a.o.Header.StaticColumns) != len(h.StaticColumns)) {
		p := withAllColumns(a.plan, a.o)
		return &p
	}
	return nil
}

// collectAll gathers the values an unfiltered writes as deltas against
// the EncodingStats minima.
func collectAll(u *rows.Unfiltered, ts, ldt, ttl *[]int64) {
	del := func(d deletiontime.DeletionTime) {
		if d.IsLive() || d == (deletiontime.DeletionTime{}) {
			return
		}
		*ts = append(*ts, d.MarkedForDeleteAt)
		*ldt = append(*ldt, d.LocalDeletionTime)
	}
	if u.Kind == rows.KindMarker {
		del(u.Deletion)
		del(u.StartDeletion)
		del(u.EndDeletion)
		return
	}
	if lv := u.Liveness; lv.HasTimestamp {
		*ts = append(*ts, lv.Timestamp)
		if lv.Expiring() {
			*ttl = append(*ttl, lv.TTL)
			*ldt = append(*ldt, lv.LocalExpirationTime)
		}
	}
	del(u.Deletion)
	del(u.ScyllaShadowable)
	for _, cd := range u.ComplexDeletions {
		del(cd.Deletion)
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		*ts = append(*ts, c.Timestamp)
		if c.IsExpiring() {
			*ttl = append(*ttl, c.TTL)
		}
		if c.IsExpiring() || c.IsTombstone() {
			*ldt = append(*ldt, c.LocalDeletionTime)
		}
	}
}
