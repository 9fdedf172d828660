package workload

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// gen says what a column's values derive from.
type gen uint8

const (
	genPartition gen = iota
	genRow
	genOp
	genHash
	genRandom
)

func parseGen(s string) gen {
	switch s {
	case "partition":
		return genPartition
	case "row":
		return genRow
	case "op":
		return genOp
	case "hash":
		return genHash
	}
	return genRandom
}

type colGen struct {
	gen      gen
	t        cqlType
	size     Dist
	elements Dist
	column   int // index into Schema.Columns (regular and static columns)
	static   bool
}

// write kinds, in Mix order
const (
	wInsert = iota
	wOverwrite
	wDeletePartition
	wDeleteRow
	wDeleteCell
	wDeleteRange
	numWriteKinds
)

// Generator is the Source of a Profile. It is deterministic for a given
// profile (seed included) and allocates nothing per operation once its
// reused buffers have grown to the largest op.
type Generator struct {
	p       *Profile
	schema  Schema
	pk, ck  []colGen
	cols    []colGen
	regular []int // indexes into cols of the non-static columns
	rows    Dist

	order string
	zipf  *rand.Zipf
	rng   *rand.Rand

	mixCum  [numWriteKinds]float64
	readCum [4]float64

	total      int64 // ops before the trailing read phase
	readsAfter int64
	i          int64 // index of the next op

	seqP, seqR int64 // sequential cursor: next row to insert
	written    int64 // partitions [0, written) have been written to (sequential order)
	nowSec     int64

	scratch []byte

	stress *stressGen // a cassandra-stress profile's inserts, instead of the above
}

// NewGenerator returns the Source for p (which must be valid) replaying ops
// operations before the trailing reads; ops < 0 means p.Ops.
func NewGenerator(p *Profile, ops int64) (*Generator, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if ops < 0 {
		ops = p.Ops
	}
	g := &Generator{p: p, total: ops, readsAfter: p.Reads.Ops}
	if p.Stress != nil {
		g.stress, g.schema, g.readsAfter = newStressGen(p), p.Stress.schema, 0
		return g, nil
	}
	g.rng = rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	g.rows, _ = ParseDist(p.RowsPerPartition)
	var s float64
	g.order, s, _ = parseOrder(p.PartitionOrder)
	if g.order == "zipf" {
		g.zipf = rand.NewZipf(g.rng, s, 1, uint64(p.Partitions-1))
	}
	g.nowSec = p.TimestampStart / 1_000_000

	compile := func(specs []ColumnSpec, static bool, regular bool) []colGen {
		var out []colGen
		for _, c := range specs {
			t, _ := parseType(c.Type)
			cg := colGen{gen: parseGen(c.Gen), t: t, size: Fixed(16), elements: Fixed(4), static: static}
			if c.Size != "" {
				cg.size, _ = ParseDist(c.Size)
			}
			if c.Elements != "" {
				cg.elements, _ = ParseDist(c.Elements)
			}
			if regular {
				cg.column = len(g.schema.Columns)
				g.schema.Columns = append(g.schema.Columns, Column{Name: c.Name, Static: static, Complex: t.collection != ""})
			}
			out = append(out, cg)
		}
		return out
	}
	for _, c := range p.Schema.PartitionKey {
		g.schema.PartitionKey = append(g.schema.PartitionKey, c.Name)
	}
	for _, c := range p.Schema.Clustering {
		g.schema.Clustering = append(g.schema.Clustering, c.Name)
	}
	g.pk = compile(p.Schema.PartitionKey, false, false)
	g.ck = compile(p.Schema.Clustering, false, false)
	g.cols = append(compile(p.Schema.Static, true, true), compile(p.Schema.Columns, false, true)...)

	for ci := range g.cols {
		if !g.cols[ci].static {
			g.regular = append(g.regular, ci)
		}
	}
	m := p.Mix
	w := [numWriteKinds]float64{m.Insert, m.Overwrite, m.DeletePartition, m.DeleteRow, m.DeleteCell, m.DeleteRange}
	cum(w[:], g.mixCum[:])
	r := p.Reads
	cum([]float64{r.Fixed, r.Inside, r.PartlyOutside, r.Outside}, g.readCum[:])
	return g, nil
}

func cum(w []float64, out []float64) {
	var sum float64
	for _, v := range w {
		sum += v
	}
	var acc float64
	for i, v := range w {
		acc += v
		out[i] = acc / sum
	}
	out[len(out)-1] = 1
}

func pick(c []float64, u float64) int {
	for i, v := range c {
		if u < v {
			return i
		}
	}
	return len(c) - 1
}

// Schema returns the columns the generator's cells index.
func (g *Generator) Schema() *Schema { return &g.schema }

// Total is the number of ops the generator yields.
func (g *Generator) Total() int64 { return g.total + g.readsAfter }

// Profile returns the generator's profile.
func (g *Generator) Profile() *Profile { return g.p }

// splitmix64 is the mixing step of SplitMix64: a cheap, well-distributed
// hash used to derive per-partition and per-row values from the seed.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// RowsIn is the number of rows partition p holds in a full pass of the
// profile (at least 1).
func (g *Generator) RowsIn(p int64) int64 {
	if g.rows.Kind == "fixed" {
		return max(int64(g.rows.A), 1)
	}
	return max(g.rows.Sample(unit(splitmix64(g.p.Seed^uint64(p)*0xd1b54a32d192ed03))), 1)
}

// Next fills op with the next operation.
func (g *Generator) Next(op *Op) (bool, error) {
	if g.i >= g.total+g.readsAfter {
		return false, nil
	}
	i := g.i
	g.i++
	if g.stress != nil {
		return true, g.stress.next(op, i)
	}
	op.Reset()
	if i >= g.total || (g.p.Reads.Ratio > 0 && g.rng.Float64() < g.p.Reads.Ratio) {
		g.read(op)
		return true, nil
	}
	kind := wInsert
	if g.mixCum[0] < 1 {
		kind = pick(g.mixCum[:], g.rng.Float64())
	}
	ts := g.p.TimestampStart + i
	if kind != wInsert && !g.anyWritten() {
		kind = wInsert
	}
	switch kind {
	case wInsert:
		p, r := g.nextInsert()
		g.row(op, p, r, i, ts, true)
	case wOverwrite:
		p, r := g.pickWritten()
		g.row(op, p, r, i, ts, false)
	case wDeletePartition:
		p, _ := g.pickWritten()
		g.key(op, p)
		op.Deletion, op.DeletedAt, op.LocalDeletionTime = DelPartition, ts, g.nowSec
	case wDeleteRow:
		p, r := g.pickWritten()
		g.key(op, p)
		g.clustering(op, p, r, i)
		op.Deletion, op.DeletedAt, op.LocalDeletionTime = DelRow, ts, g.nowSec
	case wDeleteCell:
		p, r := g.pickWritten()
		g.key(op, p)
		g.clustering(op, p, r, i)
		if len(g.regular) == 0 {
			op.Deletion, op.DeletedAt, op.LocalDeletionTime = DelRow, ts, g.nowSec
			break
		}
		cg := &g.cols[g.regular[g.rng.IntN(len(g.regular))]]
		c := op.AddCell()
		c.Column, c.Timestamp, c.LocalDeletionTime, c.Tombstone = cg.column, ts, g.nowSec, true
		if cg.t.collection != "" {
			c.Path = g.elementPath(c.Path, cg, uint64(p)<<20^uint64(r), 0)
		}
	case wDeleteRange:
		p, _ := g.pickWritten()
		g.key(op, p)
		n := g.RowsIn(p)
		if len(g.ck) == 0 {
			op.Deletion, op.DeletedAt, op.LocalDeletionTime = DelPartition, ts, g.nowSec
			break
		}
		r1, r2 := g.rng.Int64N(n), g.rng.Int64N(n)
		if r2 < r1 {
			r1, r2 = r2, r1
		}
		g.clustering(op, p, r1, i)
		op.RangeEnd = g.appendClustering(op.RangeEnd[:0], p, r2, i)
		op.Deletion, op.DeletedAt, op.LocalDeletionTime = DelRange, ts, g.nowSec
	}
	return true, nil
}

func (g *Generator) anyWritten() bool {
	return g.order != "sequential" || g.written > 0
}

// nextInsert picks the partition and row of an insert.
func (g *Generator) nextInsert() (p, r int64) {
	switch g.order {
	case "sequential":
		p, r = g.seqP, g.seqR
		if p >= g.written {
			g.written = p + 1
		}
		g.seqR++
		if g.seqR >= g.RowsIn(p) {
			g.seqR = 0
			g.seqP++
			if g.seqP >= g.p.Partitions {
				g.seqP = 0
			}
		}
		return p, r
	case "zipf":
		p = int64(g.zipf.Uint64())
	default:
		p = g.rng.Int64N(g.p.Partitions)
	}
	return p, g.rng.Int64N(g.RowsIn(p))
}

// pickWritten picks a row that has (most likely) been written already.
func (g *Generator) pickWritten() (p, r int64) {
	if g.order != "sequential" {
		return g.nextInsert()
	}
	p = g.rng.Int64N(g.written)
	n := g.RowsIn(p)
	if p == g.seqP && g.seqR > 0 && g.written == g.seqP+1 {
		n = g.seqR // partition being filled: only its first rows exist
	}
	return p, g.rng.Int64N(n)
}

func (g *Generator) read(op *Op) {
	op.Kind = OpRead
	op.Read = ReadPatterns[pick(g.readCum[:], g.rng.Float64())]
	n := g.p.Partitions
	if g.order == "sequential" && g.written > 0 && g.written < n {
		n = g.written
	}
	var p int64
	switch op.Read {
	case ReadFixed:
		p = 1234567890123 % n
	case ReadInside:
		p = g.rng.Int64N(n)
	case ReadPartlyOutside:
		p = g.rng.Int64N(n + n/6)
	case ReadOutside:
		p = n + 1234567
	}
	g.key(op, p)
}

// number derives the integer a column value is made from.
func (g *Generator) number(c *colGen, p, r, i int64) uint64 {
	switch c.gen {
	case genPartition:
		return uint64(p)
	case genRow:
		return uint64(r)
	case genOp:
		return uint64(i)
	case genHash:
		return splitmix64(g.p.Seed ^ splitmix64(uint64(p)) ^ uint64(r)*0x9e3779b97f4a7c15)
	}
	return g.rng.Uint64()
}

// appendScalar appends the serialized value of type s made from n. Fixed
// width types are n big-endian (truncated to the width); text is n in
// decimal, zero-padded to the sampled size; blobs are bytes of a stream
// seeded by n.
func (g *Generator) appendScalar(dst []byte, s scalar, size Dist, n uint64) []byte {
	if s.fixed >= 0 {
		var b [16]byte
		binary.BigEndian.PutUint64(b[8:], n)
		if s.fixed == 16 {
			binary.BigEndian.PutUint64(b[:8], splitmix64(n))
			return append(dst, b[:]...)
		}
		return append(dst, b[16-s.fixed:]...)
	}
	l := int(size.Sample(unit(splitmix64(n ^ 0x5bd1e995))))
	if l > maxValueBytes {
		l = maxValueBytes
	}
	if s.name == "blob" {
		x := n
		for k := 0; k < l; k += 8 {
			x = splitmix64(x)
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], x)
			dst = append(dst, b[:min(8, l-k)]...)
		}
		return dst
	}
	var digits [20]byte
	d := len(digits)
	for v := n; ; v /= 10 {
		d--
		digits[d] = byte('0' + v%10)
		if v < 10 {
			break
		}
	}
	num := digits[d:]
	if len(num) >= l {
		return append(dst, num[len(num)-l:]...)
	}
	for k := 0; k < l-len(num); k++ {
		dst = append(dst, '0')
	}
	return append(dst, num...)
}

// key fills op.Key for partition p; several partition key columns make a
// CompositeType value (2-byte length, bytes, end-of-component byte each).
func (g *Generator) key(op *Op, p int64) {
	if len(g.pk) == 1 {
		c := &g.pk[0]
		op.Key = g.appendScalar(op.Key[:0], c.t.value, c.size, g.number(c, p, 0, 0))
		return
	}
	op.Key = op.Key[:0]
	for k := range g.pk {
		c := &g.pk[k]
		g.scratch = g.appendScalar(g.scratch[:0], c.t.value, c.size, g.number(c, p, 0, 0))
		n := min(len(g.scratch), math.MaxUint16)
		op.Key = append(op.Key, byte(n>>8), byte(n))
		op.Key = append(op.Key, g.scratch[:n]...)
		op.Key = append(op.Key, 0)
	}
}

func (g *Generator) appendClustering(dst [][]byte, p, r, i int64) [][]byte {
	for k := range g.ck {
		c := &g.ck[k]
		var idx int
		dst, idx = AddValue(dst)
		dst[idx] = g.appendScalar(dst[idx], c.t.value, c.size, g.number(c, p, r, i))
	}
	return dst
}

func (g *Generator) clustering(op *Op, p, r, i int64) {
	op.Clustering = g.appendClustering(op.Clustering[:0], p, r, i)
}

func (g *Generator) elementPath(dst []byte, c *colGen, n uint64, e int64) []byte {
	switch c.t.collection {
	case "list": // a timeuuid per element
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], uint64(g.p.TimestampStart)+uint64(e))
		binary.BigEndian.PutUint64(b[8:], splitmix64(n))
		return append(dst[:0], b[:]...)
	}
	return g.appendScalar(dst[:0], c.t.key, c.size, n+uint64(e))
}

// row fills an insert (with row marker) or an update of row r of partition p.
func (g *Generator) row(op *Op, p, r, i, ts int64, insert bool) {
	g.key(op, p)
	g.clustering(op, p, r, i)
	var ttl int32
	if g.p.TTL.Fraction > 0 && g.rng.Float64() < g.p.TTL.Fraction {
		ttl = g.p.TTL.Seconds
	}
	if insert {
		op.HasLiveness, op.Timestamp = true, ts
		if ttl > 0 {
			op.TTL, op.LocalExpirationTime = ttl, g.nowSec+int64(ttl)
		}
	}
	for k := range g.cols {
		c := &g.cols[k]
		if c.static && r != 0 {
			continue // statics are written with a partition's first row
		}
		n := g.number(c, p, r, i)
		cells := int64(1)
		if c.t.collection != "" {
			cells = c.elements.Sample(unit(splitmix64(n ^ 0x2545f4914f6cdd1d)))
			cells = min(cells, maxElements)
		}
		for e := int64(0); e < cells; e++ {
			cell := op.AddCell()
			cell.Column, cell.Timestamp = c.column, ts
			if ttl > 0 {
				cell.TTL, cell.LocalDeletionTime = ttl, g.nowSec+int64(ttl)
			}
			switch c.t.collection {
			case "":
				cell.Value = g.appendScalar(cell.Value, c.t.value, c.size, n)
			case "set":
				cell.Path = g.elementPath(cell.Path, c, n, e)
			case "list":
				cell.Path = g.elementPath(cell.Path, c, n, e)
				cell.Value = g.appendScalar(cell.Value, c.t.key, c.size, n+uint64(e))
			case "map":
				cell.Path = g.elementPath(cell.Path, c, n, e)
				cell.Value = g.appendScalar(cell.Value, c.t.value, c.size, n^uint64(e))
			}
		}
	}
}

// Generated values and collections are capped so that a profile typo (say
// size: exp(1e9)) cannot exhaust memory: 1 MiB per value, 4096 elements.
const (
	maxValueBytes = 1 << 20
	maxElements   = 4096
)
