package workload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

// How a cassandra-stress profile's data is derived (generate/PartitionIterator.java,
// generate/values/*.java), with every random draw replaced by a hash of
// what it is drawn for, so that the same seed always names the same data:
//
//   - A partition seed picks each key column's value: a draw from the
//     column's population, turned into a value (text of a size drawn from
//     `size` for that value, a number, ...). Seeds whose draws agree name the
//     same partition, so a population of 10 means at most 10 values.
//   - The key seeds the first clustering level: its `cluster` distribution
//     gives how many values the level has, its population the values (the
//     repeated ones dropped). Each deeper level is seeded by the level above
//     and its first value, so, as in stress, every value of a level has the
//     same children, and a partition holds the product of one draw per level.
//   - A row's values are drawn from the leaf's seed and the leaf value.

// StressPartition is one partition of a StressTable: its key and the values
// of each clustering level. Load fills it; it is reused between loads.
type StressPartition struct {
	key         []byte
	idseed      uint64
	profileSeed uint64
	// levels[d] holds level d's values in draw order, repeats dropped
	// (level 0 only its first value when loaded lazily, see load).
	levels    [][][]byte
	levelSeed []uint64 // the seed of level d's draws
	childSeed []uint64 // what seeds level d+1: level d's seed and first value
	count0    int      // level 0's draw count
	arena     []byte
	seen      map[uint64]struct{} // hashes of a long level's values, to drop repeats
}

// Key is the serialized partition key.
func (p *StressPartition) Key() []byte { return p.key }

// Levels returns each clustering level's distinct values in draw order;
// the partition's rows are every combination of one value per level.
func (p *StressPartition) Levels() [][][]byte { return p.levels }

// seedMix derives the hash input of partition seed s under a profile seed.
func seedMix(s int64, profileSeed uint64) uint64 {
	return splitmix64(uint64(s) ^ splitmix64(profileSeed^0x6a09e667f3bcc909))
}

// fold combines a seed and a value into the seed of what derives from it.
func fold(seed uint64, v []byte) uint64 {
	h := seed ^ 0xcbf29ce484222325
	for _, b := range v {
		h = (h ^ uint64(b)) * 0x100000001b3
	}
	return splitmix64(h ^ uint64(len(v)))
}

// draw is the uniform number of the n-th draw of a stream.
func draw(stream uint64, n int) float64 {
	return unit(splitmix64(stream + uint64(n)*0x9e3779b97f4a7c15))
}

// Salts that keep the streams of one seed apart.
const (
	saltCluster = 0xa0761d6478bd642f
	saltSize    = 0xe7037ed1a0b428db
	saltChars   = 0x8ebc6af09c88c6e3
	saltCount   = 0x589965cc75374cc3
	saltElement = 0x1d8e4e27c47d124f
	saltMapVal  = 0xf1357aea2e62a9c5
)

// PartitionKey appends the partition key of seed s to dst (several key
// columns make a CompositeType value: 2-byte length, value,
// end-of-component byte each; compileStress keeps it within 65535 bytes).
func (t *StressTable) PartitionKey(dst []byte, s int64, profileSeed uint64) []byte {
	m := seedMix(s, profileSeed)
	for _, c := range t.pk {
		u := draw(m^c.salt, 0)
		if len(t.pk) == 1 {
			return t.appendValue(dst, c, c.typ, u)
		}
		at := len(dst)
		dst = append(dst, 0, 0)
		dst = t.appendValue(dst, c, c.typ, u)
		binary.BigEndian.PutUint16(dst[at:], uint16(len(dst)-at-2))
		dst = append(dst, 0)
	}
	return dst
}

// key fills p.key and the seed the partition's rows derive from.
func (t *StressTable) key(p *StressPartition, s int64, profileSeed uint64) {
	p.key = t.PartitionKey(p.key[:0], s, profileSeed)
	p.idseed, p.profileSeed = fold(splitmix64(profileSeed), p.key), profileSeed
}

// levelCount is how many values level d draws under its seed (at least 1).
func (t *StressTable) levelCount(d int, seed uint64) int {
	c := t.ck[d]
	n := c.cluster.long(draw(seed^^c.salt^saltCluster, 0))
	return int(min(max(n, 1), maxStressLevel))
}

// levelValue appends the j-th value level d draws under its seed.
func (t *StressTable) levelValue(dst []byte, d int, seed uint64, j int) []byte {
	c := t.ck[d]
	return t.appendValue(dst, c, c.typ, draw(seed^c.salt, j))
}

// Load fills p with partition seed s: the key and every level's values.
func (t *StressTable) Load(p *StressPartition, s int64, profileSeed uint64) {
	t.load(p, s, profileSeed, false)
}

// load fills p; lazy leaves level 0 with its first value only: stressGen
// draws the ones it selects (and does not drop the rare repeated value of
// a level 0 draw: writing its rows again changes nothing).
func (t *StressTable) load(p *StressPartition, s int64, profileSeed uint64, lazy bool) {
	t.key(p, s, profileSeed)
	L := len(t.ck)
	p.arena = p.arena[:0]
	p.levels = grow(p.levels, L)
	p.levelSeed = growU(p.levelSeed, L)
	p.childSeed = growU(p.childSeed, L)
	seed := p.idseed
	for d := 0; d < L; d++ {
		p.levelSeed[d] = seed
		n := t.levelCount(d, seed)
		if d == 0 {
			p.count0 = n
			if lazy {
				n = 1
			}
		}
		vals := p.levels[d][:0]
		hashed := n > 16
		if hashed {
			if p.seen == nil {
				p.seen = map[uint64]struct{}{}
			}
			clear(p.seen)
		}
		for j := 0; j < n; j++ {
			at := len(p.arena)
			p.arena = t.levelValue(p.arena, d, seed, j)
			v := p.arena[at:len(p.arena):len(p.arena)]
			repeat := false
			if hashed {
				// a value seen before has its hash in the set; a hash
				// seen before is almost always a repeat: make sure.
				h := fold(0, v)
				if _, ok := p.seen[h]; ok {
					repeat = containsBytes(vals, v)
				}
				p.seen[h] = struct{}{}
			} else {
				repeat = containsBytes(vals, v)
			}
			if repeat {
				p.arena = p.arena[:at]
				continue
			}
			vals = append(vals, v)
		}
		p.levels[d] = vals
		p.childSeed[d] = fold(seed, vals[0])
		seed = p.childSeed[d]
	}
	// The arena may have moved while it grew: re-slice every value.
	off := 0
	for d := 0; d < L; d++ {
		for j, v := range p.levels[d] {
			p.levels[d][j] = p.arena[off : off+len(v) : off+len(v)]
			off += len(v)
		}
	}
}

// containsBytes reports whether vals holds v.
func containsBytes(vals [][]byte, v []byte) bool {
	for _, x := range vals {
		if bytes.Equal(x, v) {
			return true
		}
	}
	return false
}

func grow(s [][][]byte, n int) [][][]byte {
	for len(s) < n {
		s = append(s, nil)
	}
	return s[:n]
}

func growU(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}

// rowSeed is the seed of a row's values: the leaf level's seed and value.
func (t *StressTable) rowSeed(p *StressPartition, clustering [][]byte) uint64 {
	L := len(t.ck)
	if L == 0 {
		return p.idseed
	}
	return fold(p.childSeed[L-1], clustering[L-1])
}

// RowPopulation draws insert.row-population for u in [0, 1): the share of
// value columns a write sets (the others are written null).
func (t *StressTable) RowPopulation(u float64) float64 { return t.population.sample(u) }

// Row fills op with the write cassandra-stress makes of one row of p: an
// UPDATE of every value column (static ones included) of the row keyed by
// clustering, at timestamp ts, or an INSERT (with a row marker) when every
// column is in the primary key. The value columns past the rowPop share
// are written null (cell tombstones). i is the op's index, which list
// element paths derive from.
func (t *StressTable) Row(op *Op, p *StressPartition, clustering [][]byte, ts, i int64, rowPop float64) {
	op.Reset()
	op.Key = append(op.Key, p.key...)
	for _, v := range clustering {
		var k int
		op.Clustering, k = AddValue(op.Clustering)
		op.Clustering[k] = append(op.Clustering[k], v...)
	}
	if t.keyOnly {
		op.HasLiveness, op.Timestamp = true, ts
		return
	}
	rs := t.rowSeed(p, clustering)
	n := float64(len(t.values))
	nowSec := ts / 1_000_000
	for ci, c := range t.values {
		isNull := float64(ci+1)/n > rowPop
		switch {
		case c.typ.IsCounter():
			if isNull {
				continue // a null increment changes nothing
			}
			cell := op.AddCell()
			cell.Column, cell.Timestamp = c.column, ts
			cell.Value = appendCounterContext(cell.Value, p.profileSeed, c.population.long(draw(rs^c.salt, 0)))
		case c.typ.IsMultiCell():
			if !isNull {
				t.elements(op, c, rs, ts, i)
			}
		default:
			cell := op.AddCell()
			cell.Column, cell.Timestamp = c.column, ts
			if isNull {
				cell.Tombstone, cell.LocalDeletionTime = true, nowSec
				continue
			}
			cell.Value = t.appendValue(cell.Value, c, c.typ, draw(rs^c.salt, 0))
		}
	}
}

// elements appends a collection's element cells: `col = col + ?`, as
// stress's UPDATE adds to non-frozen collections. The size distribution
// gives the element count (and each element's length); a list appends new
// elements at every write, a set or map adds the same ones again.
func (t *StressTable) elements(op *Op, c *stressCol, rs uint64, ts, i int64) {
	count := int(min(max(c.size.long(draw(rs^c.salt^saltCount, 0)), 0), maxElements))
	stream := (rs * 31) ^ c.salt ^ saltElement
	start := len(op.Cells)
	for e := 0; e < count; e++ {
		u := draw(stream, e)
		cell := op.AddCell()
		cell.Column, cell.Timestamp = c.column, ts
		switch c.typ.Kind {
		case cqltype.List:
			cell.Path = appendTimeUUID(cell.Path, ts+int64(e), uint64(i)^c.salt)
			cell.Value = t.appendValue(cell.Value, c, c.typ.Params[0], u)
		case cqltype.Set:
			cell.Path = t.appendValue(cell.Path, c, c.typ.Params[0], u)
		case cqltype.Map:
			cell.Path = t.appendValue(cell.Path, c, c.typ.Params[0], u)
			cell.Value = t.appendValue(cell.Value, c, c.typ.Params[1], unit(splitmix64(math.Float64bits(u)^saltMapVal)))
		}
		if c.typ.Kind != cqltype.List {
			for k := start; k < len(op.Cells)-1; k++ {
				if bytes.Equal(op.Cells[k].Path, cell.Path) {
					op.Cells = op.Cells[:len(op.Cells)-1] // a repeated element is one element
					break
				}
			}
		}
	}
}

// appendValue appends the value of type typ (the column's type or its
// element type) drawn at u from column c's population, as the generators
// of generate/values/*.java make them: text and blobs of a size drawn for
// the value, integers as the drawn number, doubles the real draw, inet the
// number's low 32 bits, uuid the number twice, timestamps and timeuuids
// milliseconds.
func (t *StressTable) appendValue(dst []byte, c *stressCol, typ *cqltype.Type, u float64) []byte {
	switch typ.Kind {
	case cqltype.Double:
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(c.population.double(u)))
	case cqltype.Float:
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(c.population.double(u))))
	}
	id := c.population.long(u)
	switch typ.Kind {
	case cqltype.Ascii, cqltype.Text, cqltype.Blob:
		size := int(min(max(c.size.long(unit(splitmix64(uint64(id)^saltSize))), 0), maxValueBytes))
		// Eight bytes per step of a seeded stream; text keeps stress's
		// characters: 7-bit, one UTF-8 byte each.
		mask, add := ^uint64(0), uint64(0)
		if typ.Kind != cqltype.Blob {
			mask, add = 0x7f7f7f7f7f7f7f7f, 0x2020202020202020
		}
		at := len(dst)
		dst = slices.Grow(dst, size+8)[:at+(size+7)&^7]
		x := uint64(^id) ^ saltChars
		for k := at; k < len(dst); k += 8 {
			x += 0x9e3779b97f4a7c15
			z := (x ^ x>>30) * 0xbf58476d1ce4e5b9
			z = (z ^ z>>27) * 0x94d049bb133111eb
			binary.LittleEndian.PutUint64(dst[k:], ((z^z>>31)&mask+add)&mask)
		}
		return dst[:at+size]
	case cqltype.Boolean:
		if id%2 == 0 {
			return append(dst, 1)
		}
		return append(dst, 0)
	case cqltype.Bigint, cqltype.Timestamp, cqltype.Time, cqltype.Counter:
		return binary.BigEndian.AppendUint64(dst, uint64(id))
	case cqltype.Int, cqltype.Inet:
		return binary.BigEndian.AppendUint32(dst, uint32(id))
	case cqltype.Date:
		// days since the epoch, stored offset by 2^31
		return binary.BigEndian.AppendUint32(dst, uint32(int32(id))+1<<31)
	case cqltype.SmallInt:
		return binary.BigEndian.AppendUint16(dst, uint16(id))
	case cqltype.TinyInt:
		return append(dst, byte(id))
	case cqltype.UUID:
		dst = binary.BigEndian.AppendUint64(dst, uint64(id))
		return binary.BigEndian.AppendUint64(dst, uint64(id))
	case cqltype.TimeUUID:
		return appendTimeUUID(dst, id*1000, c.salt)
	case cqltype.Varint:
		return appendVarint(dst, id)
	case cqltype.Decimal:
		dst = binary.BigEndian.AppendUint32(dst, 0) // scale 0: BigDecimal.valueOf(long)
		return appendVarint(dst, id)
	}
	panic(fmt.Sprintf("workload: no stress generator for %v", typ.Kind)) // stressTypeSupported refused it
}

// appendVarint appends n as the shortest big-endian two's complement.
func appendVarint(dst []byte, n int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	i := 0
	for i < 7 && (b[i] == 0 && b[i+1]&0x80 == 0 || b[i] == 0xff && b[i+1]&0x80 != 0) {
		i++
	}
	return append(dst, b[i:]...)
}

// appendTimeUUID appends a version 1 UUID of the time micros (since the
// Unix epoch) with the given clock sequence and node bits.
func appendTimeUUID(dst []byte, micros int64, lsb uint64) []byte {
	ticks := uint64(micros)*10 + 0x01b21dd213814000 // 100 ns since 1582-10-15
	msb := (ticks&0xffffffff)<<32 | (ticks>>32&0xffff)<<16 | 0x1000 | ticks>>48&0x0fff
	dst = binary.BigEndian.AppendUint64(dst, msb)
	return binary.BigEndian.AppendUint64(dst, lsb&^(3<<62)|1<<63) // the IETF variant
}

// appendCounterContext appends the counter context of a counter update
// of count: one global shard of the node's counter id (a UUID, one per
// profile seed), clock 1.
func appendCounterContext(dst []byte, profileSeed uint64, count int64) []byte {
	var id [16]byte
	node := splitmix64(profileSeed ^ 0x243f6a8885a308d3)
	binary.BigEndian.PutUint64(id[:], node&^0xf000|0x1000)
	binary.BigEndian.PutUint64(id[8:], splitmix64(node)&^(3<<62)|1<<63)
	return cqltype.AppendGlobalCounter(dst, id, 1, count)
}

// stressGen replays a StressTable's insert operation (SchemaInsert with
// the defaults of a `user ... ops(insert=1)` run): each operation takes
// insert.partitions partition seeds in sequence (wrapping at the seed
// count, as -pop seq=1..N does), draws insert.select and
// insert.row-population for each, and writes the rows selected. As in
// stress, the select chance is rolled once per value of the first
// clustering level and a value that wins brings every row below it; a seed
// that selects nothing is passed over for the next. One Op is one row;
// the rows of one operation share its timestamp.
type stressGen struct {
	t           *StressTable
	profileSeed uint64
	seeds       int64
	rng         *rand.Rand
	ts0         int64

	nextSeed  int64 // 0-based cursor over the seeds
	batch     int64 // operations started
	batchLeft int64 // partitions still to write in this operation

	part   StressPartition
	active bool
	sel    []int32  // selected level-0 draw indexes
	selAt  int      // index into sel of the current level-0 value
	path   []int    // position in levels 1.. of the current row
	clust  [][]byte // the current row's clustering values
	value0 []byte   // level 0's current value
	rowPop float64
}

// maxEmptySeeds bounds how many seeds in a row may select no row before
// the replay gives up (a select chance too small for the partitions).
const maxEmptySeeds = 1 << 20

func newStressGen(p *Profile) *stressGen {
	return &stressGen{t: p.Stress, profileSeed: p.Seed, seeds: p.Partitions,
		rng: rand.New(rand.NewPCG(p.Seed, 0x5851f42d4c957f2d)), ts0: p.TimestampStart}
}

func (g *stressGen) next(op *Op, i int64) error {
	t := g.t
	for !g.active {
		if g.batchLeft <= 0 {
			g.batch++
			g.batchLeft = t.partitions.long(g.rng.Float64())
			continue // an operation of no partitions writes nothing
		}
		if err := g.pickPartition(); err != nil {
			return err
		}
		g.batchLeft--
	}
	L := len(t.ck)
	g.clust = g.clust[:0]
	if L > 0 {
		g.clust = append(g.clust, g.value0)
		for d := 1; d < L; d++ {
			g.clust = append(g.clust, g.part.levels[d][g.path[d]])
		}
	}
	t.Row(op, &g.part, g.clust, g.ts0+g.batch-1, i, g.rowPop)
	g.advance()
	return nil
}

// pickPartition takes the next seed that selects at least one row.
func (g *stressGen) pickPartition() error {
	t := g.t
	for tries := 0; tries < maxEmptySeeds; tries++ {
		s := g.nextSeed + 1
		g.nextSeed = (g.nextSeed + 1) % g.seeds
		chance := t.selectRow.sample(g.rng.Float64())
		g.rowPop = t.population.sample(g.rng.Float64())
		t.load(&g.part, s, g.profileSeed, true)
		if len(t.ck) == 0 {
			g.active = true // one row: the select chance has nothing to choose from
			return nil
		}
		g.sel = g.sel[:0]
		n := g.part.count0
		if chance >= 0.99999 {
			for j := 0; j < n; j++ {
				g.sel = append(g.sel, int32(j))
			}
		} else if chance > 0 {
			// Bernoulli(chance) for each value, by jumping over the losers.
			lq := math.Log1p(-chance)
			for j := -1; ; {
				skip := math.Floor(math.Log1p(-g.rng.Float64()) / lq)
				if skip >= float64(n) {
					break
				}
				j += 1 + int(skip)
				if j >= n {
					break
				}
				g.sel = append(g.sel, int32(j))
			}
		}
		if len(g.sel) > 0 {
			g.selAt = 0
			g.path = g.path[:0]
			for range t.ck {
				g.path = append(g.path, 0)
			}
			g.setValue0()
			g.active = true
			return nil
		}
	}
	return fmt.Errorf("cassandra-stress profile %s: insert.select %s chose no row in %d partitions in a row", t.QualifiedName(), t.selectRow.String(), maxEmptySeeds)
}

// setValue0 draws the current level-0 value.
func (g *stressGen) setValue0() {
	g.value0 = g.t.levelValue(g.value0[:0], 0, g.part.levelSeed[0], int(g.sel[g.selAt]))
}

// advance moves to the next row of the selection.
func (g *stressGen) advance() {
	L := len(g.t.ck)
	if L == 0 {
		g.active = false
		return
	}
	for d := L - 1; d >= 1; d-- {
		g.path[d]++
		if g.path[d] < len(g.part.levels[d]) {
			return
		}
		g.path[d] = 0
	}
	g.selAt++
	if g.selAt >= len(g.sel) {
		g.active = false
		return
	}
	g.setValue0()
}
