package export

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// colType is a column's Parquet type as the datasets use it.
type colType int

const (
	tString     colType = iota // BYTE_ARRAY, STRING
	tBinary                    // BYTE_ARRAY
	tInt64                     // INT64 (BIGINT)
	tInt32                     // INT32 (INTEGER)
	tBool                      // BOOLEAN
	tDouble                    // DOUBLE
	tTimestamp                 // INT64, TIMESTAMP(MILLIS, UTC): a second of Cassandra's clock
	tStringList                // LIST<STRING> with nullable elements
	tSizeMap                   // MAP<STRING, BIGINT>
)

// spec declares one column: the one place a dataset's columns, their
// order and types are written down (the Parquet schema and docs/export.md
// follow it).
type spec struct {
	name     string
	typ      colType
	optional bool
	// stats: min/max statistics, worth it where engines prune by the
	// column (keys, tokens, timestamps), not for free-form values.
	stats bool
	// dict: a string column whose values are known before the file is
	// written (the node, a kind, a column name): written as indices into
	// that dictionary (RLE_DICTIONARY), which costs a fraction of writing
	// the same few strings again and again.
	dict bool
	// deltaLength: a byte-array column of free-form values (a cell's
	// value, its bytes, its path), written DELTA_LENGTH_BYTE_ARRAY: the
	// lengths bit-packed apart from the bytes. PLAIN's 4-byte length
	// before each value was most of what Snappy found to compress in
	// them, at 700 MB/s; without it the files are a tenth smaller and
	// Snappy passes over the bytes it cannot shrink at memory speed.
	deltaLength bool
	// constant: a dict column whose one word is every record's (the node,
	// the sstable), which the records do not give.
	constant bool
	// shared: a column whose value runs of records repeat (a partition's
	// key, a row's clustering), which the records give once per run and
	// the encoder writes with a dictionary of its own (shared.go).
	shared bool
	doc    string
}

// col is one column's values for the batch being filled. Required
// columns have no definition levels; optional ones one per record (0
// null, 1 present), and a dict column an index per record, both held for
// batchRows records and zeroed when the batch is reset, so that a null
// (level 0, index 0) costs nothing and a value is one store at the
// record's place; the list and map columns have their levels per
// element, appended.
// Byte arrays are spans of the batch's arena: offsets rather than
// slices, which the collector would have to trace one by one (a tenth of
// the export's instructions when they were slices), which the chunk
// writer copies into its pages.
type col struct {
	spec
	spans []span
	i64   []int64
	i32   []int32
	f64   []float64
	bl    []bool
	def   []int16
	rep   []int16
	keys  []parquet.ByteArray // tSizeMap: the keys, beside i64 (the values)
	// A dict column's indices, one per record (0 for a null), and its
	// dictionary.
	idx       []int32
	rec       *int // the batch's record being filled (batch.n)
	dictWords [][]byte
	dictPlain []byte  // the dictionary, PLAIN-encoded
	present32 []int32 // scratch: the indices of the records with a value
	// A shared column's runs, and their values' elements.
	runs  []run
	elems [][]byte
	// own: a deltaLength column's bytes, apart from the batch's arena,
	// its values one after the other, so that a page takes them in one
	// copy rather than one per value.
	own []byte
}

// setDictionary gives a dict column its values.
func (c *col) setDictionary(words [][]byte) {
	c.dictWords = words
	c.dictPlain = c.dictPlain[:0]
	for _, w := range words {
		c.dictPlain = binary.LittleEndian.AppendUint32(c.dictPlain, uint32(len(w)))
		c.dictPlain = append(c.dictPlain, w...)
	}
}

// newCol makes column s of a batch whose record being filled is *rec.
func newCol(s spec, rec *int) *col {
	c := &col{spec: s, rec: rec}
	if c.optional {
		c.def = make([]int16, batchRows)
	}
	if c.dict {
		c.idx = make([]int32, batchRows)
	}
	return c
}

func (c *col) reset() {
	c.spans, c.i64, c.i32, c.f64, c.bl, c.rep, c.keys = c.spans[:0], c.i64[:0], c.i32[:0], c.f64[:0], c.bl[:0], c.rep[:0], c.keys[:0]
	if c.optional {
		clear(c.def)
	} else {
		c.def = c.def[:0]
	}
	clear(c.idx)
	c.runs, c.elems, c.own = c.runs[:0], c.elems[:0], c.own[:0]
}

func (c *col) present() {
	if c.optional {
		c.def[*c.rec] = 1
	}
}

// null records a null in an optional column: nothing to do, a record's
// level and index are zero until a value is recorded.
func (c *col) null() {}

// word records a dict column's value: the index of one of its words.
func (c *col) word(i int32) { c.present(); c.idx[*c.rec] = i }

// span is a byte array's place in the batch's arena.
type span struct{ start, end uint32 }

// nullSpan is a null element of a list.
var nullSpan = span{^uint32(0), ^uint32(0)}

func spanOf(start, end int) span { return span{uint32(start), uint32(end)} }

// bytes records the byte array at arena[start:end].
func (c *col) bytes(start, end int) { c.present(); c.spans = append(c.spans, spanOf(start, end)) }
func (c *col) int64(v int64)        { c.present(); c.i64 = append(c.i64, v) }
func (c *col) int32(v int32)        { c.present(); c.i32 = append(c.i32, v) }
func (c *col) bool(v bool)          { c.present(); c.bl = append(c.bl, v) }
func (c *col) double(v float64)     { c.present(); c.f64 = append(c.f64, v) }

// list records one list of byte strings; a nullSpan element is a null.
func (c *col) list(elems []span) {
	if len(elems) == 0 {
		c.def, c.rep = append(c.def, 0), append(c.rep, 0)
		return
	}
	for i, e := range elems {
		r := int16(1)
		if i == 0 {
			r = 0
		}
		c.rep = append(c.rep, r)
		if e == nullSpan {
			c.def = append(c.def, 1)
			continue
		}
		c.def = append(c.def, 2)
		c.spans = append(c.spans, e)
	}
}

// sizes records one map of names to byte counts.
func (c *col) sizes(names [][]byte, values []int64) {
	if len(names) == 0 {
		c.def, c.rep = append(c.def, 0), append(c.rep, 0)
		return
	}
	for i := range names {
		r := int16(1)
		if i == 0 {
			r = 0
		}
		c.rep, c.def = append(c.rep, r), append(c.def, 1)
		c.keys, c.i64 = append(c.keys, names[i]), append(c.i64, values[i])
	}
}

// node is the column's Parquet schema node.
func (c *spec) node() (schema.Node, error) {
	rep := parquet.Repetitions.Required
	if c.optional {
		rep = parquet.Repetitions.Optional
	}
	str := func(name string, rep parquet.Repetition) (schema.Node, error) {
		return schema.NewPrimitiveNodeLogical(name, rep, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
	}
	switch c.typ {
	case tString:
		return str(c.name, rep)
	case tBinary:
		return schema.NewPrimitiveNode(c.name, rep, parquet.Types.ByteArray, -1, -1)
	case tInt64:
		return schema.NewPrimitiveNodeLogical(c.name, rep, schema.NewIntLogicalType(64, true), parquet.Types.Int64, -1, -1)
	case tInt32:
		return schema.NewPrimitiveNodeLogical(c.name, rep, schema.NewIntLogicalType(32, true), parquet.Types.Int32, -1, -1)
	case tBool:
		return schema.NewPrimitiveNode(c.name, rep, parquet.Types.Boolean, -1, -1)
	case tDouble:
		return schema.NewPrimitiveNode(c.name, rep, parquet.Types.Double, -1, -1)
	case tTimestamp:
		return schema.NewPrimitiveNodeLogical(c.name, rep, schema.NewTimestampLogicalType(true, schema.TimeUnitMillis), parquet.Types.Int64, -1, -1)
	case tStringList:
		elem, err := str("element", parquet.Repetitions.Optional)
		if err != nil {
			return nil, err
		}
		return schema.ListOfWithName(c.name, elem, parquet.Repetitions.Required, -1)
	case tSizeMap:
		k, err := str("key", parquet.Repetitions.Required)
		if err != nil {
			return nil, err
		}
		v, err := schema.NewPrimitiveNodeLogical("value", parquet.Repetitions.Required, schema.NewIntLogicalType(64, true), parquet.Types.Int64, -1, -1)
		if err != nil {
			return nil, err
		}
		return schema.MapOf(c.name, k, v, parquet.Repetitions.Required, -1)
	}
	return nil, fmt.Errorf("column %s: unknown type %d", c.name, c.typ)
}

// leafPath is the column's (first) leaf's path, as writer properties
// name columns.
func (c *spec) leafPath() string {
	if c.typ == tStringList {
		return c.name + ".list.element"
	}
	return c.name
}

// leaves is how many Parquet leaf columns the column has.
func (c *spec) leaves() int {
	if c.typ == tSizeMap {
		return 2
	}
	return 1
}

// write hands the batch's n records to the chunk writers of leaf i of
// the row group (and i+1 for a map).
func (c *col) write(rg *rowGroup, i, n int, arena []byte) error {
	ch := rg.chunks[i]
	def, rep := c.def, c.rep
	if c.optional {
		def = def[:n]
	} else if len(def) == 0 {
		def = nil
	}
	if len(rep) == 0 {
		rep = nil
	}
	if c.dict {
		return c.writeDict(ch, c.idx[:n], def)
	}
	var v leafValues
	switch c.typ {
	case tString, tBinary, tStringList:
		v = leafValues{spans: c.spans, arena: arena}
		if c.deltaLength {
			v.arena = c.own
		}
	case tSizeMap:
		v = leafValues{ba: c.keys}
	case tInt64, tTimestamp:
		v = leafValues{i64: c.i64}
	case tInt32:
		v = leafValues{i32: c.i32}
	case tBool:
		v = leafValues{bl: c.bl}
	case tDouble:
		v = leafValues{f64: c.f64}
	default:
		return fmt.Errorf("column %s: unknown type %d", c.name, c.typ)
	}
	if err := ch.write(v, def, rep); err != nil || c.typ != tSizeMap {
		return err
	}
	return rg.chunks[i+1].write(leafValues{i64: c.i64}, def, rep)
}

// writeDict writes a dict column: its dictionary once per column chunk,
// then the batch's indices, those of the records that have a value. A
// constant column's indices are all zero: its word is never recorded.
func (c *col) writeDict(ch *chunkWriter, idx []int32, def []int16) error {
	if !ch.dict {
		if err := ch.writeDictionary(c.dictPlain, len(c.dictWords)); err != nil {
			return err
		}
	}
	if def != nil {
		c.present32 = c.present32[:0]
		for r, d := range def {
			if d == 1 {
				c.present32 = append(c.present32, idx[r])
			}
		}
		idx = c.present32
	}
	return ch.writeIndices(idx, def, nil, nil)
}
