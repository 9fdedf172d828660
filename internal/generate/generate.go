// Package generate writes synthetic sstables from a workload profile
// (package workload, docs/workload.md): the same profile format the memtable
// simulator replays. A profile's operations describe a stream of writes; an
// sstable is what a flush of their result holds, so generate reads the
// profile as a description of that result:
//
//   - partitions, rows_per_partition, the schema (types, value sizes,
//     element counts, gen) and seed are used as they are;
//   - the mix's weights become shares of the data: delete_partition the
//     share of partitions with a partition deletion, delete_row of rows
//     written as row tombstones, delete_cell of cells written as cell
//     tombstones, delete_range of partitions with one range tombstone;
//   - ttl.fraction of rows expire after ttl.seconds;
//   - ops, partition_order and reads have no meaning for one sstable and
//     are ignored.
//
// Clustering values are derived from the row index so that rows come out
// sorted (their gen is ignored). Everything derives from the seed, the
// partition and row index through a hash, so the output is byte-for-byte
// deterministic and partitions can be produced in token order without
// keeping them in memory: only one token per partition is kept to sort.
package generate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/workload"
)

// Options controls a generation.
type Options struct {
	Version format.Version
	// Seed overrides the profile's seed when non-zero.
	Seed uint64
	// Compression nil: the default, LZ4 with 16 KiB chunks; set
	// Uncompressed for an uncompressed Data.db.
	Compression     *writer.Compression
	Uncompressed    bool
	ColumnIndexSize int // 0: writer.DefaultColumnIndexSize
	Generation      string
	// Progress, when set, is called with partitions done and the total.
	Progress func(done, total int64)
}

// Result describes what was written.
type Result struct {
	DataPath   string
	Partitions int64
	Rows       int64
	DataBytes  int64 // uncompressed Data.db length
	// Recovered says what was repaired in the output directory first
	// (leftovers of killed runs; see writer.Staging.Recovered).
	Recovered []string
}

type table struct {
	p                       *workload.Profile
	seed                    uint64
	pk, ck, static, regular []*colType
	rowsDist                workload.Dist
	shares                  struct{ partDel, rowDel, cellDel, rangeDel, ttl float64 }
	ttl                     int64
	ts0, now                int64
	counters                bool // every non-key column is a counter
	schema                  *rows.Schema
	header                  *stats.Header
}

func newTable(p *workload.Profile, seed uint64) (*table, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t := &table{p: p, seed: p.Seed}
	if seed != 0 {
		t.seed = seed
	}
	var err error
	cols := func(specs []workload.ColumnSpec, gen string) ([]*colType, error) {
		var out []*colType
		for _, s := range specs {
			c, err := parseColumn(s, gen)
			if err != nil {
				return nil, err
			}
			if gen != "random" && c.isMulti {
				return nil, fmt.Errorf("column %s: a collection cannot be part of the primary key", s.Name)
			}
			out = append(out, c)
		}
		return out, nil
	}
	if t.pk, err = cols(p.Schema.PartitionKey, "partition"); err != nil {
		return nil, err
	}
	if len(t.pk) == 0 {
		return nil, errors.New("profile: schema.partition_key is empty")
	}
	if t.ck, err = cols(p.Schema.Clustering, "row"); err != nil {
		return nil, err
	}
	// Static and regular columns: stored in Cassandra's column order.
	order := func(specs []workload.ColumnSpec) ([]*colType, []rows.Column, []stats.Column, error) {
		cs, err := cols(specs, "random")
		if err != nil {
			return nil, nil, nil, err
		}
		rc := make([]rows.Column, len(cs))
		byName := map[string]*colType{}
		for i, c := range cs {
			rc[i] = rows.Column{Name: specs[i].Name, Type: c.class, Fixed: c.fixed, Complex: c.isMulti, Counter: c.kind == "counter"}
			byName[specs[i].Name] = c
		}
		rows.SortColumns(rc)
		sorted := make([]*colType, len(rc))
		var sc []stats.Column
		for i, c := range rc {
			sorted[i] = byName[c.Name]
			sc = append(sc, stats.Column{Name: []byte(c.Name), Type: stats.TypeName{Class: c.Type}})
		}
		return sorted, rc, sc, nil
	}
	for _, c := range append(slices.Clone(t.pk), t.ck...) {
		if c.kind == "counter" {
			return nil, errors.New("profile: a counter cannot be part of the primary key")
		}
	}
	var staticCols, regularCols []rows.Column
	var staticStats, regularStats []stats.Column
	if t.static, staticCols, staticStats, err = order(p.Schema.Static); err != nil {
		return nil, err
	}
	if t.regular, regularCols, regularStats, err = order(p.Schema.Columns); err != nil {
		return nil, err
	}
	if t.rowsDist, err = workload.ParseDist(p.RowsPerPartition); err != nil {
		return nil, err
	}
	m := p.Mix
	total := m.Insert + m.Overwrite + m.DeletePartition + m.DeleteRow + m.DeleteCell + m.DeleteRange
	if total > 0 {
		t.shares.partDel, t.shares.rowDel = m.DeletePartition/total, m.DeleteRow/total
		t.shares.cellDel, t.shares.rangeDel = m.DeleteCell/total, m.DeleteRange/total
	}
	t.shares.ttl, t.ttl = p.TTL.Fraction, int64(p.TTL.Seconds)
	if t.ttl <= 0 {
		t.shares.ttl = 0
	}
	counters := 0
	for _, c := range append(slices.Clone(t.static), t.regular...) {
		if c.kind == "counter" {
			counters++
		}
	}
	if counters > 0 {
		if counters != len(t.static)+len(t.regular) {
			return nil, errors.New("profile: a table with counter columns has only counter columns besides its primary key (Cassandra refuses to mix them)")
		}
		// Counters take no TTL, and a deleted counter cannot be written
		// again.
		t.counters, t.shares.ttl, t.shares.cellDel = true, 0, 0
	}
	t.ts0 = p.TimestampStart
	t.now = t.ts0 / 1_000_000
	fixed := make([]int, len(t.ck))
	for i, c := range t.ck {
		fixed[i] = c.fixed
	}
	t.schema = &rows.Schema{ClusteringFixed: fixed, Static: staticCols, Regular: regularCols,
		MinTimestamp: t.ts0, MinLocalDeletionTime: t.now, MinTTL: 0}
	keyClass := t.pk[0].class
	if len(t.pk) > 1 {
		var parts []string
		for _, c := range t.pk {
			parts = append(parts, c.class)
		}
		keyClass = marshal + "CompositeType(" + joinComma(parts) + ")"
	}
	h := &stats.Header{MinTimestamp: t.ts0, MinLocalDeletionTime: t.now, MinTTL: 0,
		KeyType: typeName(keyClass), StaticColumns: staticStats, RegularColumns: regularStats}
	for _, c := range t.ck {
		h.ClusteringTypes = append(h.ClusteringTypes, typeName(c.class))
	}
	for i := range h.StaticColumns {
		h.StaticColumns[i].Type = typeName(h.StaticColumns[i].Type.Class)
	}
	for i := range h.RegularColumns {
		h.RegularColumns[i].Type = typeName(h.RegularColumns[i].Type.Class)
	}
	t.header = h
	return t, nil
}

func typeName(class string) stats.TypeName {
	t, err := cqltype.Parse(class)
	if err != nil {
		return stats.TypeName{Class: class}
	}
	return stats.TypeName{Class: class, Type: t}
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// h hashes the seed with up to three indexes and a purpose tag.
func (t *table) h(tag, a, b, c uint64) uint64 {
	return mix64(mix64(mix64(mix64(t.seed^tag*0x9E3779B97F4A7C15)+a)+b) + c)
}

// key serializes partition p's key.
func (t *table) key(dst []byte, p int64) []byte {
	one := func(dst []byte, c *colType, i int) []byte {
		n := uint64(p)
		switch c.gen {
		case "hash", "random":
			n = mix64(uint64(p) ^ uint64(i)<<56)
		}
		if c.fixed < 0 {
			// unique prefix, then filler up to the drawn size
			dst = fmt.Appendf(dst, "%016x", n)
			return appendValue(dst, c, n, false)
		}
		if c.fixed < 8 && (c.gen == "hash" || c.gen == "random") {
			n = uint64(p) * 0x9E3779B1 // odd multiplier: a bijection mod 2^width
		}
		return appendValue(dst, c, n, false)
	}
	if len(t.pk) == 1 {
		return one(dst, t.pk[0], 0)
	}
	for i, c := range t.pk {
		at := len(dst)
		dst = append(dst, 0, 0)
		dst = one(dst, c, i)
		binary.BigEndian.PutUint16(dst[at:], uint16(len(dst)-at-2))
		dst = append(dst, 0)
	}
	return dst
}

func (t *table) rowsIn(p int64) int64 {
	n := t.rowsDist.Sample(unit(t.h(1, uint64(p), 0, 0)))
	if n < 1 {
		n = 1
	}
	for _, c := range t.ck {
		n = min(n, int64(maxOrdered(c)))
	}
	if len(t.ck) == 0 {
		n = 1
	}
	return n
}

// Generate writes the sstable the profile describes into dir.
func Generate(p *workload.Profile, dir string, o Options) (*Result, error) {
	if p.Stress != nil {
		return generateStress(p, dir, o)
	}
	t, err := newTable(p, o.Seed)
	if err != nil {
		return nil, err
	}
	n := p.Partitions
	w, err := newWriter(dir, &o, t.header, t.schema, n)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			w.Abort()
		}
	}()
	// Token order: one (token, partition) pair per partition.
	tokens := make([]int64, n)
	order := make([]int64, n)
	var kb []byte
	for i := int64(0); i < n; i++ {
		kb = t.key(kb[:0], i)
		tokens[i] = token.Murmur3.Token(kb).Int64()
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int64) int {
		if tokens[a] != tokens[b] {
			if tokens[a] < tokens[b] {
				return -1
			}
			return 1
		}
		ka, kb := t.key(nil, a), t.key(nil, b)
		return token.Murmur3.CompareKeys(ka, kb)
	})
	tokens = nil
	res := &Result{Partitions: n, Recovered: w.Staging().Recovered()}
	g := &partGen{t: t}
	for i, pi := range order {
		if err := g.write(w, pi, res); err != nil {
			return nil, err
		}
		if o.Progress != nil && i%256 == 0 {
			o.Progress(int64(i), n)
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

// newWriter opens the sstable writer for the options (oa and LZ4 with
// 16 KiB chunks unless they say otherwise).
func newWriter(dir string, o *Options, h *stats.Header, sch *rows.Schema, keys int64) (*writer.SSTableWriter, error) {
	if o.Version.Name == "" {
		o.Version = oa.Version
	}
	sch.Version = o.Version
	comp := o.Compression
	if comp == nil && !o.Uncompressed {
		comp = &writer.Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 16 << 10, MaxCompressedLength: 1<<31 - 1}
	}
	if o.Uncompressed {
		comp = nil
	}
	return writer.NewSSTableWriter(dir, writer.Config{Version: o.Version, Generation: o.Generation, Header: h,
		Schema: sch, Partitioner: stats.Murmur3Partitioner, Compression: comp, ColumnIndexSize: o.ColumnIndexSize,
		ExpectedKeys: keys})
}

// partGen produces one partition at a time, reusing its buffers.
type partGen struct {
	t     *table
	key   []byte
	u     rows.Unfiltered
	vals  []byte
	clust [][]byte
	bound [][]byte
}

func (g *partGen) write(w *writer.SSTableWriter, p int64, res *Result) error {
	t := g.t
	g.key = t.key(g.key[:0], p)
	up := uint64(p)
	ts := t.ts0 + int64(t.h(2, up, 0, 0)%1_000_000)
	del := deletiontime.Live
	if unit(t.h(3, up, 0, 0)) < t.shares.partDel {
		// deleted before the (re)inserted rows below were written
		del = deletiontime.DeletionTime{MarkedForDeleteAt: t.ts0 - 1, LocalDeletionTime: t.now + int64(t.h(4, up, 0, 0)%3600)}
	}
	if err := w.StartPartition(g.key, del); err != nil {
		return err
	}
	g.vals = g.vals[:0]
	if len(t.static) > 0 {
		u := g.reset(rows.KindStaticRow)
		for ci, c := range t.static {
			g.cells(u, c, ci, up, 1<<40, ts, false, false)
		}
		u.Liveness = rows.Liveness{}
		if err := w.AddStatic(u); err != nil {
			return err
		}
	}
	n := t.rowsIn(p)
	rangeLo, rangeHi := int64(-1), int64(-1)
	if len(t.ck) > 0 && n >= 2 && unit(t.h(5, up, 0, 0)) < t.shares.rangeDel {
		rangeLo = int64(t.h(6, up, 0, 0) % uint64(n))
		rangeHi = rangeLo + int64(t.h(7, up, 0, 0)%uint64(n-rangeLo))
	}
	for r := int64(0); r < n; r++ {
		if r == rangeLo {
			if err := g.marker(w, r, true, up); err != nil {
				return err
			}
		}
		g.vals = g.vals[:0]
		ur := uint64(r)
		u := g.reset(rows.KindRow)
		g.clust = g.clust[:0]
		for _, c := range t.ck {
			at := len(g.vals)
			g.vals = appendValue(g.vals, c, ur, true)
			g.clust = append(g.clust, g.vals[at:len(g.vals):len(g.vals)])
		}
		rts := ts + r
		if unit(t.h(8, up, ur, 0)) < t.shares.rowDel {
			u.Deletion = deletiontime.DeletionTime{MarkedForDeleteAt: rts, LocalDeletionTime: t.now + int64(t.h(9, up, ur, 0)%3600)}
		} else {
			expiring := unit(t.h(10, up, ur, 0)) < t.shares.ttl
			u.Liveness = rows.Liveness{HasTimestamp: true, Timestamp: rts}
			if expiring {
				u.Liveness.TTL, u.Liveness.LocalExpirationTime = t.ttl, t.now+t.ttl
			}
			for ci, c := range t.regular {
				g.cells(u, c, ci, up, ur, rts, expiring, true)
			}
		}
		u.Clustering = g.clust
		if err := w.Add(u); err != nil {
			return err
		}
		res.Rows++
		if r == rangeHi {
			if err := g.marker(w, r, false, up); err != nil {
				return err
			}
		}
	}
	return w.EndPartition()
}

func (g *partGen) reset(k rows.Kind) *rows.Unfiltered {
	g.u = rows.Unfiltered{Kind: k, Cells: g.u.Cells[:0], Deletion: deletiontime.Live}
	return &g.u
}

// cells appends the cells of column ci of row r.
func (g *partGen) cells(u *rows.Unfiltered, c *colType, ci int, p, r uint64, ts int64, expiring, canDelete bool) {
	t := g.t
	value := func(c *colType, salt uint64) []byte {
		var n uint64
		switch c.gen {
		case "partition":
			n = p
		case "row":
			n = r
		default:
			n = t.h(11, p, r, uint64(ci)<<32|salt)
		}
		at := len(g.vals)
		g.vals = appendValue(g.vals, c, n, false)
		return g.vals[at:len(g.vals):len(g.vals)]
	}
	cell := rows.Cell{Column: ci, Timestamp: ts}
	if expiring {
		cell.Flags |= rows.CellFlagExpiring
		cell.TTL, cell.LocalDeletionTime = t.ttl, t.now+t.ttl
	}
	if canDelete && unit(t.h(12, p, r, uint64(ci))) < t.shares.cellDel {
		u.Cells = append(u.Cells, rows.Cell{Column: ci, Timestamp: ts, Flags: rows.CellFlagDeleted,
			LocalDeletionTime: t.now + int64(t.h(13, p, r, uint64(ci))%3600)})
		return
	}
	if !c.isMulti {
		cell.Value = value(c, 0)
		u.Cells = append(u.Cells, cell)
		return
	}
	count := c.count.Sample(unit(t.h(14, p, r, uint64(ci))))
	start := len(u.Cells)
	for e := int64(0); e < count; e++ {
		cl := cell
		switch c.kind {
		case "list":
			at := len(g.vals)
			g.vals = appendValue(g.vals, &colType{kind: "timeuuid"}, uint64(e)+1, true)
			cl.Path = g.vals[at:len(g.vals):len(g.vals)]
			cl.Value = value(c.elem, uint64(e)+1)
		case "set":
			cl.Path = value(c.elem, uint64(e)+1)
			cl.Value = nil
		case "map":
			cl.Path = value(c.key, uint64(e)+1)
			cl.Value = value(c.elem, uint64(e)+1<<20)
		}
		u.Cells = append(u.Cells, cl)
	}
	// Paths must be unique and sorted by the key type; sort, drop repeats.
	elems := u.Cells[start:]
	cmp := pathComparator(c)
	slices.SortStableFunc(elems, func(a, b rows.Cell) int { return cmp(a.Path, b.Path) })
	elems = slices.CompactFunc(elems, func(a, b rows.Cell) bool { return cmp(a.Path, b.Path) == 0 })
	u.Cells = u.Cells[:start+len(elems)]
}

func pathComparator(c *colType) func(a, b []byte) int {
	class := marshal + "TimeUUIDType"
	switch c.kind {
	case "set":
		class = c.elem.class
	case "map":
		class = c.key.class
	}
	t, err := cqltype.Parse(class)
	if err != nil {
		return func(a, b []byte) int { return bytes.Compare(a, b) }
	}
	return t.Compare
}

// marker writes the inclusive start or end bound of the partition's range
// tombstone around row r's clustering.
func (g *partGen) marker(w *writer.SSTableWriter, r int64, start bool, p uint64) error {
	t := g.t
	g.bound = g.bound[:0]
	var buf []byte
	for _, c := range t.ck {
		at := len(buf)
		buf = appendValue(buf, c, uint64(r), true)
		g.bound = append(g.bound, buf[at:])
	}
	kind := clustering.InclEndBound
	if start {
		kind = clustering.InclStartBound
	}
	d := deletiontime.DeletionTime{MarkedForDeleteAt: t.ts0, LocalDeletionTime: t.now + int64(t.h(15, p, 0, 0)%3600)}
	u := &rows.Unfiltered{Kind: rows.KindMarker, Bound: clustering.Prefix{Kind: kind, Values: g.bound}, Deletion: d}
	return w.Add(u)
}

// finish closes and commits the sstable, and says how long its Data.db
// is uncompressed (what Result.DataBytes reports).
func finish(w *writer.SSTableWriter) (path string, dataBytes int64, err error) {
	written, err := w.Close()
	if err != nil {
		return "", 0, err
	}
	if err := w.Staging().Commit(); err != nil {
		return "", 0, err
	}
	return w.Descriptor().Path(format.ComponentData), written.Data.Length, nil
}
