package export

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Shared columns are the cells dataset's columns whose value a run of
// records repeats: a partition's key and token over every record of the
// partition, a row's clustering over the row's records. Written as plain
// values they were most of the bytes the export compressed (a key, 20
// bytes or more, a thousand times over in a wide partition); written as
// arrow-go writes a dictionary column they cost a hash lookup per record.
// Instead the records hold runs (the value once, and the record it starts
// at), and the encoder builds each row group's dictionary itself, looking
// a value up once per run, and writes the dictionary and the records'
// indices at the row group's end.

// run is one value of a shared column and the records that repeat it:
// from record first of its batch to the next run's first (or the batch's
// end).
type run struct {
	first    int32
	null     bool  // a null (an optional column)
	i64      int64 // an INT64 column's value
	from, to int32 // a byte-array or list column's elements, in col.elems
}

// shareBytes starts a run of a byte-array column's value at record first.
func (c *col) shareBytes(first int, b []byte) {
	n := int32(len(c.elems))
	c.runs = append(c.runs, run{first: int32(first), from: n, to: n + 1})
	c.elems = append(c.elems, b)
}

func (c *col) shareInt64(first int, v int64) {
	c.runs = append(c.runs, run{first: int32(first), i64: v})
}
func (c *col) shareNull(first int) { c.runs = append(c.runs, run{first: int32(first), null: true}) }

// Row group bounds for the shared columns, whose levels and indices stay
// in memory until the row group ends (about 16 bytes a record for the
// three): a row group ends at rowGroupRecords records, or when a shared
// column's dictionary reaches sharedDictBytes (a table of one-cell
// partitions, where every key is new), whichever comes first.
const (
	rowGroupRecords = 1 << 20
	sharedDictBytes = 8 << 20
	// sharedPageLevels is how many levels a shared column's data page
	// holds (about 128 KiB of indices before RLE, a few hundred bytes
	// after for a key).
	sharedPageLevels = 32 << 10
)

// sharedDict is one shared column of the row group being written: its
// dictionary (every distinct value, in order of first use) and each
// record's levels and dictionary index.
type sharedDict struct {
	spec
	leaf int
	// The dictionary: byte arrays at data[offs[i]:offs[i+1]], or INT64s.
	data  []byte
	offs  []int32
	i64   []int64
	table []int32 // open addressing: a dictionary index + 1, 0 for an empty slot
	seed  maphash.Seed
	last  int32 // the index the last lookup gave, -1 for none
	// The row group's values: an index per value (nulls have none), and
	// the levels.
	idx      []int32
	def, rep []int16
	// scratch for a page's statistics and the dictionary's page
	statsBytes []parquet.ByteArray
	statsInt64 []int64
	plainBuf   []byte
}

func newSharedDict(s spec, leaf int) *sharedDict {
	d := &sharedDict{spec: s, leaf: leaf, seed: maphash.MakeSeed()}
	d.reset()
	return d
}

func (d *sharedDict) reset() {
	d.data, d.offs, d.i64 = d.data[:0], append(d.offs[:0], 0), d.i64[:0]
	if len(d.table) == 0 {
		d.table = make([]int32, 1<<12)
	} else {
		clear(d.table)
	}
	d.last = -1
	d.idx, d.def, d.rep = d.idx[:0], d.def[:0], d.rep[:0]
}

func (d *sharedDict) entries() int {
	if d.typ == tInt64 {
		return len(d.i64)
	}
	return len(d.offs) - 1
}

// size is the dictionary's size as Parquet's PLAIN encoding writes it.
func (d *sharedDict) size() int {
	if d.typ == tInt64 {
		return 8 * len(d.i64)
	}
	return len(d.data) + 4*(len(d.offs)-1)
}

func (d *sharedDict) value(i int32) []byte { return d.data[d.offs[i]:d.offs[i+1]] }

// lookupBytes returns v's dictionary index, adding it if it is new.
func (d *sharedDict) lookupBytes(v []byte) int32 {
	if d.last >= 0 && bytes.Equal(d.value(d.last), v) {
		return d.last
	}
	mask := len(d.table) - 1
	for i := int(maphash.Bytes(d.seed, v)) & mask; ; i = (i + 1) & mask {
		e := d.table[i]
		if e == 0 {
			n := int32(len(d.offs) - 1)
			d.data = append(d.data, v...)
			d.offs = append(d.offs, int32(len(d.data)))
			d.table[i] = n + 1
			d.grow()
			d.last = n
			return n
		}
		if bytes.Equal(d.value(e-1), v) {
			d.last = e - 1
			return e - 1
		}
	}
}

// lookupInt64 returns v's dictionary index, adding it if it is new.
func (d *sharedDict) lookupInt64(v int64) int32 {
	if d.last >= 0 && d.i64[d.last] == v {
		return d.last
	}
	mask := len(d.table) - 1
	for i := int(hashInt64(v)) & mask; ; i = (i + 1) & mask {
		e := d.table[i]
		if e == 0 {
			n := int32(len(d.i64))
			d.i64 = append(d.i64, v)
			d.table[i] = n + 1
			d.grow()
			d.last = n
			return n
		}
		if d.i64[e-1] == v {
			d.last = e - 1
			return e - 1
		}
	}
}

func hashInt64(v int64) uint64 {
	h := uint64(v) * 0x9e3779b97f4a7c15
	return h ^ h>>29
}

// grow doubles the hash table once it is half full.
func (d *sharedDict) grow() {
	n := d.entries()
	if 2*n < len(d.table) {
		return
	}
	d.table = make([]int32, 2*len(d.table))
	mask := len(d.table) - 1
	for e := int32(0); e < int32(n); e++ {
		var h uint64
		if d.typ == tInt64 {
			h = hashInt64(d.i64[e])
		} else {
			h = maphash.Bytes(d.seed, d.value(e))
		}
		i := int(h) & mask
		for d.table[i] != 0 {
			i = (i + 1) & mask
		}
		d.table[i] = e + 1
	}
}

// add appends the n records of a batch's column c.
func (d *sharedDict) add(c *col, n int) {
	var elemIdx []int32
	for r := range c.runs {
		ru := &c.runs[r]
		end := int32(n)
		if r+1 < len(c.runs) {
			end = c.runs[r+1].first
		}
		count := int(end - ru.first)
		switch {
		case d.typ == tStringList:
			elems := c.elems[ru.from:ru.to]
			if len(elems) == 0 {
				for range count {
					d.def, d.rep = append(d.def, 0), append(d.rep, 0)
				}
				continue
			}
			elemIdx = elemIdx[:0]
			for _, e := range elems {
				if e == nil {
					elemIdx = append(elemIdx, -1)
				} else {
					elemIdx = append(elemIdx, d.lookupBytes(e))
				}
			}
			for range count {
				for k, ix := range elemIdx {
					d.rep = append(d.rep, min(int16(k), 1))
					if ix < 0 {
						d.def = append(d.def, 1)
					} else {
						d.def, d.idx = append(d.def, 2), append(d.idx, ix)
					}
				}
			}
		case ru.null:
			for range count {
				d.def = append(d.def, 0)
			}
		default:
			var ix int32
			if d.typ == tInt64 {
				ix = d.lookupInt64(ru.i64)
			} else {
				ix = d.lookupBytes(c.elems[ru.from])
			}
			for range count {
				d.idx = append(d.idx, ix)
			}
			if d.optional {
				for range count {
					d.def = append(d.def, 1)
				}
			}
		}
	}
}

// maxDef is the definition level of a present value.
func (d *sharedDict) maxDef() int16 {
	switch {
	case d.typ == tStringList:
		return 2
	case d.optional:
		return 1
	}
	return 0
}

// plain is the dictionary PLAIN-encoded, as its page holds it.
func (d *sharedDict) plain() []byte {
	d.plainBuf = d.plainBuf[:0]
	if d.typ == tInt64 {
		for _, v := range d.i64 {
			d.plainBuf = binary.LittleEndian.AppendUint64(d.plainBuf, uint64(v))
		}
		return d.plainBuf
	}
	for i := range int32(len(d.offs) - 1) {
		v := d.value(i)
		d.plainBuf = binary.LittleEndian.AppendUint32(d.plainBuf, uint32(len(v)))
		d.plainBuf = append(d.plainBuf, v...)
	}
	return d.plainBuf
}

// write writes the row group's column: its dictionary, then its indices
// in pages of about sharedPageLevels levels (each starting a record),
// each page with its statistics when the column has them.
func (d *sharedDict) write(rg *rowGroup) error {
	ch := rg.chunks[d.leaf]
	if err := ch.writeDictionary(d.plain(), d.entries()); err != nil {
		return err
	}
	levels := len(d.def)
	maxDef := d.maxDef()
	if maxDef == 0 {
		levels = len(d.idx)
	}
	for start, slot := 0, 0; start < levels; {
		end := min(start+sharedPageLevels, levels)
		for d.typ == tStringList && end < levels && d.rep[end] != 0 {
			end++
		}
		var def, rep []int16
		values, nulls := end-start, 0
		if maxDef > 0 {
			def = d.def[start:end]
			if d.typ == tStringList {
				rep = d.rep[start:end]
			}
			values = 0
			for _, l := range def {
				if l == maxDef {
					values++
				} else if l == maxDef-1 {
					nulls++
				}
			}
		}
		idx := d.idx[slot : slot+values]
		err := ch.writeIndices(idx, def, rep, func(ps metadata.TypedStatistics) { d.pageStats(ps, idx, nulls) })
		if err == nil {
			err = ch.flushPage()
		}
		if err != nil {
			return err
		}
		start, slot = end, slot+values
	}
	return nil
}

// pageStats gives a page's statistics its values, the dictionary's
// entries at idx (each run's once), and its nulls.
func (d *sharedDict) pageStats(ps metadata.TypedStatistics, idx []int32, nulls int) {
	prev := int32(-1)
	d.statsBytes, d.statsInt64 = d.statsBytes[:0], d.statsInt64[:0]
	for _, ix := range idx {
		if ix == prev {
			continue
		}
		prev = ix
		if d.typ == tInt64 {
			d.statsInt64 = append(d.statsInt64, d.i64[ix])
		} else {
			d.statsBytes = append(d.statsBytes, d.value(ix))
		}
	}
	switch s := ps.(type) {
	case *metadata.ByteArrayStatistics:
		s.Update(d.statsBytes, int64(nulls))
		s.IncNumValues(int64(len(idx) - len(d.statsBytes)))
	case *metadata.Int64Statistics:
		s.Update(d.statsInt64, int64(nulls))
		s.IncNumValues(int64(len(idx) - len(d.statsInt64)))
	}
}
