package generate

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/workload"
)

// A cassandra-stress profile (workload.StressTable) describes its data
// through partition seeds: generate writes the partitions of seeds
// 1..Partitions (the keys of several seeds may agree: they are one
// partition), each with every row its cluster distributions give, as the
// table holds them once stress has visited each row. The columns and types
// are table_definition's; the values are the ones memsim replays. Rows carry
// no row marker (stress UPDATEs the value columns) unless every column is in
// the primary key; columns past a draw of insert.row-population are cell
// tombstones; each partition is written at a timestamp of its own.

// stressCell says where a workload column goes in the sstable's header.
type stressCell struct {
	static bool
	index  int           // into rows.Schema.Static or Regular
	typ    *cqltype.Type // the column's type
}

func generateStress(p *workload.Profile, dir string, o Options) (*Result, error) {
	st := p.Stress
	seed := p.Seed
	if o.Seed != 0 {
		seed = o.Seed
	}
	ts := st.Schema
	ts0 := p.TimestampStart
	now := ts0 / 1_000_000

	// The header: key, clustering and the value columns in Cassandra's order.
	h := &stats.Header{MinTimestamp: ts0, MinLocalDeletionTime: now}
	if len(ts.PartitionKey) == 1 {
		h.KeyType = headerType(ts.Column(ts.PartitionKey[0]).Type)
	} else {
		class := marshal + "CompositeType("
		for i, k := range ts.PartitionKey {
			if i > 0 {
				class += ","
			}
			class += ts.Column(k).Type.Class
		}
		h.KeyType = typeName(class + ")")
	}
	var clusteringTypes []*cqltype.Type
	var fixed []int
	for _, c := range ts.Clustering {
		t := ts.Column(c.Name).Type
		clusteringTypes = append(clusteringTypes, t)
		h.ClusteringTypes = append(h.ClusteringTypes, headerType(t))
		fixed = append(fixed, t.FixedLength())
	}
	var static, regular []rows.Column
	for _, c := range st.Columns() {
		t := ts.Column(c.Name).Type
		rc := rows.Column{Name: c.Name, Type: t.Class, Fixed: t.FixedLength(), Complex: t.IsMultiCell(), Counter: t.IsCounter()}
		if c.Static {
			static = append(static, rc)
		} else {
			regular = append(regular, rc)
		}
	}
	rows.SortColumns(static)
	rows.SortColumns(regular)
	where := make([]stressCell, len(st.Columns()))
	for i, c := range st.Columns() {
		list := regular
		if c.Static {
			list = static
		}
		at := slices.IndexFunc(list, func(rc rows.Column) bool { return rc.Name == c.Name })
		where[i] = stressCell{static: c.Static, index: at, typ: ts.Column(c.Name).Type}
	}
	for _, c := range static {
		h.StaticColumns = append(h.StaticColumns, stats.Column{Name: []byte(c.Name), Type: headerType(ts.Column(c.Name).Type)})
	}
	for _, c := range regular {
		h.RegularColumns = append(h.RegularColumns, stats.Column{Name: []byte(c.Name), Type: headerType(ts.Column(c.Name).Type)})
	}
	sch := &rows.Schema{ClusteringFixed: fixed, Static: static, Regular: regular, MinTimestamp: ts0, MinLocalDeletionTime: now}

	// The partitions of the seeds, each key once (its first seed), in token order.
	type part struct {
		token int64
		seed  int64
	}
	var parts []part
	seen := map[string]bool{}
	var key []byte
	for s := int64(1); s <= p.Partitions; s++ {
		key = st.PartitionKey(key[:0], s, seed)
		if k := string(key); !seen[k] {
			seen[k] = true
			parts = append(parts, part{token.Murmur3.Token(key).Int64(), s})
		}
	}
	seen = nil
	keyOf := func(s int64) []byte { return st.PartitionKey(nil, s, seed) }
	slices.SortFunc(parts, func(a, b part) int {
		if a.token != b.token {
			if a.token < b.token {
				return -1
			}
			return 1
		}
		return token.Murmur3.CompareKeys(keyOf(a.seed), keyOf(b.seed))
	})

	w, err := newWriter(dir, &o, h, sch, int64(len(parts)))
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			w.Abort()
		}
	}()
	res := &Result{Partitions: int64(len(parts)), Recovered: w.Staging().Recovered()}
	var sp workload.StressPartition
	g := &stressWriter{st: st, w: w, where: where, clusteringTypes: clusteringTypes,
		pathTypes: [2][]*cqltype.Type{make([]*cqltype.Type, len(regular)), make([]*cqltype.Type, len(static))}}
	for _, wh := range where {
		g.pathTypes[b2i(wh.static)][wh.index] = wh.typ.ElementPathType()
	}
	for i, pt := range parts {
		st.Load(&sp, pt.seed, seed)
		ts := ts0 + int64(i)
		rowPop := st.RowPopulation(unit(mix64(seed ^ uint64(pt.seed)*0x9E3779B97F4A7C15)))
		if err := g.partition(&sp, ts, rowPop, res); err != nil {
			return nil, err
		}
		if o.Progress != nil && i%256 == 0 {
			o.Progress(int64(i), int64(len(parts)))
		}
	}
	path, dataBytes, err := finish(w)
	if err != nil {
		return nil, err
	}
	ok = true
	res.DataPath, res.DataBytes = path, dataBytes
	return res, nil
}

// headerType is the serialization header's name of a column type.
func headerType(t *cqltype.Type) stats.TypeName { return stats.TypeName{Class: t.Class, Type: t} }

// stressWriter writes one stress partition at a time, reusing its buffers.
type stressWriter struct {
	st              *workload.StressTable
	w               *writer.SSTableWriter
	where           []stressCell
	clusteringTypes []*cqltype.Type
	pathTypes       [2][]*cqltype.Type // element path types of the regular [0] and static [1] columns

	order [][]int // each level's value indexes in clustering order
	path  []int
	clust [][]byte
	op    workload.Op
	u     rows.Unfiltered
	cells []rows.Cell
}

func (g *stressWriter) partition(sp *workload.StressPartition, ts int64, rowPop float64, res *Result) error {
	levels := sp.Levels()
	L := len(levels)
	// Sort each level: children are the same under every value of the
	// level above, so the rows in order are the levels' product in order.
	g.order = g.order[:0]
	for d := 0; d < L; d++ {
		idx := make([]int, len(levels[d]))
		for j := range idx {
			idx[j] = j
		}
		t := g.clusteringTypes[d]
		vals := levels[d]
		slices.SortFunc(idx, func(a, b int) int { return t.Compare(vals[a], vals[b]) })
		g.order = append(g.order, idx)
	}
	if err := g.w.StartPartition(sp.Key(), deletiontime.Live); err != nil {
		return err
	}
	g.path = g.path[:0]
	for range levels {
		g.path = append(g.path, 0)
	}
	first := true
	for i := int64(0); ; i++ {
		g.clust = g.clust[:0]
		for d := 0; d < L; d++ {
			g.clust = append(g.clust, levels[d][g.order[d][g.path[d]]])
		}
		g.st.Row(&g.op, sp, g.clust, ts, i, rowPop)
		if first {
			// The static row: the statics as the partition's first row's
			// write sets them (every write sets them).
			first = false
			if _, err := g.write(rows.KindStaticRow, true, ts); err != nil {
				return err
			}
		}
		wrote, err := g.write(rows.KindRow, false, ts)
		if err != nil {
			return err
		}
		if wrote {
			res.Rows++
		}
		d := L - 1
		for ; d >= 0; d-- {
			g.path[d]++
			if g.path[d] < len(levels[d]) {
				break
			}
			g.path[d] = 0
		}
		if d < 0 {
			break
		}
	}
	return g.w.EndPartition()
}

// write adds the static or regular part of g.op as one unfiltered. An
// UPDATE that sets no regular column (a table whose value columns are all
// static) makes no row, and one that sets no static column no static row.
func (g *stressWriter) write(kind rows.Kind, static bool, ts int64) (bool, error) {
	g.cells = g.cells[:0]
	for _, c := range g.op.Cells {
		wh := g.where[c.Column]
		if wh.static != static {
			continue
		}
		rc := rows.Cell{Column: wh.index, Timestamp: c.Timestamp, Path: c.Path, Value: c.Value}
		if c.Tombstone {
			rc.Flags, rc.LocalDeletionTime, rc.Value = rows.CellFlagDeleted, c.LocalDeletionTime, nil
		}
		g.cells = append(g.cells, rc)
	}
	if len(g.cells) == 0 && (static || !g.op.HasLiveness) {
		return false, nil
	}
	// Header order, then element order by the path's type (paths of one
	// column are distinct: workload.StressTable.Row drops repeats).
	slices.SortStableFunc(g.cells, func(a, b rows.Cell) int {
		if a.Column != b.Column {
			return a.Column - b.Column
		}
		if a.Path == nil {
			return 0
		}
		return g.pathTypes[b2i(static)][a.Column].Compare(a.Path, b.Path)
	})
	for i := 1; i < len(g.cells); i++ {
		a, b := &g.cells[i-1], &g.cells[i]
		if a.Column == b.Column && (a.Path == nil || bytes.Equal(a.Path, b.Path)) {
			return false, fmt.Errorf("internal error: two cells of one column at one path in a generated row")
		}
	}
	g.u = rows.Unfiltered{Kind: kind, Cells: g.cells, Deletion: deletiontime.Live}
	if static {
		return true, g.w.AddStatic(&g.u)
	}
	if g.op.HasLiveness {
		g.u.Liveness = rows.Liveness{HasTimestamp: true, Timestamp: ts}
	}
	g.u.Clustering = g.clust
	return true, g.w.Add(&g.u)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
