package export

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/klauspost/compress/s2"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// pqWriter lays a Parquet file out with arrow-go's metadata builders and
// page writers: the magic, the row groups (each column chunk's pages
// collected in memory by arrow-go's buffered page writer, then written in
// column order with the chunk's metadata), the footer. The pages
// themselves are encoded by chunkWriter (encodings.go).
type pqWriter struct {
	sink  *tellWriter
	props *parquet.WriterProperties
	sc    *schema.Schema
	meta  *metadata.FileMetaDataBuilder
	rgs   int16
}

var parquetMagic = []byte("PAR1")

// tellWriter counts what goes through it: the position arrow-go's page
// writers take a column chunk's offsets from (its Tell).
type tellWriter struct{ vfs.CountingWriter }

func (t *tellWriter) Tell() int64 { return t.N }

func newPQWriter(w io.Writer, root *schema.GroupNode, props *parquet.WriterProperties, kv metadata.KeyValueMetadata) (*pqWriter, error) {
	sc := schema.NewSchema(root)
	pw := &pqWriter{sink: &tellWriter{vfs.CountingWriter{W: w}}, props: props, sc: sc,
		meta: metadata.NewFileMetadataBuilder(sc, props, kv)}
	if _, err := pw.sink.Write(parquetMagic); err != nil {
		return nil, err
	}
	return pw, nil
}

// rowGroup is the row group being written: a chunk writer per leaf
// column, each with its own pages, so that the columns are written on
// any core in any order.
type rowGroup struct {
	pw     *pqWriter
	meta   *metadata.RowGroupMetaDataBuilder
	chunks []*chunkWriter
}

func (pw *pqWriter) appendRowGroup() (_ *rowGroup, err error) {
	defer recoverWriter(&err)
	rg := &rowGroup{pw: pw, meta: pw.meta.AppendRowGroup()}
	for leaf := range pw.sc.NumColumns() {
		cm := rg.meta.NextColumnChunk()
		path := cm.Descr().Path()
		pager, err := file.NewPageWriter(pw.sink, pw.props.CompressionFor(path), pw.props.CompressionLevelFor(path),
			cm, pw.rgs, int16(leaf), pw.props.Allocator(), true, nil, nil)
		if err != nil {
			return nil, err
		}
		rg.chunks = append(rg.chunks, newChunkWriter(cm, pager, pw.props))
	}
	return rg, nil
}

// close writes the row group's column chunks into the file, in order,
// and ends it. Every column must hold the same records.
func (rg *rowGroup) close() (err error) {
	defer recoverWriter(&err)
	var total int64
	for _, ch := range rg.chunks {
		if err := ch.close(); err != nil {
			return fmt.Errorf("column %s: %w", ch.descr.Path(), err)
		}
		if ch.rowsWritten != rg.chunks[0].rowsWritten {
			return fmt.Errorf("column %s has %d records, column %s %d", ch.descr.Path(), ch.rowsWritten,
				rg.chunks[0].descr.Path(), rg.chunks[0].rowsWritten)
		}
		total += ch.meta.TotalUncompressedSize()
	}
	rg.meta.SetNumRows(int(rg.chunks[0].rowsWritten))
	if err := rg.meta.Finish(total, rg.pw.rgs); err != nil {
		return err
	}
	rg.pw.rgs++
	return nil
}

// recoverWriter reports a panic of arrow-go's builders (which they use
// for misuse) as the error.
func recoverWriter(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("parquet writer: %v", r)
	}
}

// close writes the footer: the file metadata, its length, the magic.
func (pw *pqWriter) close() (err error) {
	defer recoverWriter(&err)
	fm, err := pw.meta.Finish()
	if err != nil {
		return err
	}
	n, err := fm.WriteTo(pw.sink, nil)
	if err != nil {
		return err
	}
	if _, err := pw.sink.Write(binary.LittleEndian.AppendUint32(nil, uint32(n))); err != nil {
		return err
	}
	_, err = pw.sink.Write(parquetMagic)
	return err
}

// chunkWriter writes one leaf column of a row group: levels and values
// are gathered for a page, encoded and compressed when it is full, and
// handed to arrow-go's page writer, which adds the page header and keeps
// the chunk's metadata.
type chunkWriter struct {
	descr          *schema.Column
	meta           *metadata.ColumnChunkMetaDataBuilder
	pager          file.PageWriter
	enc            parquet.Encoding // the data pages' values' encoding
	maxDef, maxRep int16
	// Statistics of the page and of the chunk, nil for a column without.
	pageStats, chunkStats metadata.TypedStatistics
	signed                bool
	maxStats              int
	// dict: the dictionary page is written, of dictEntries values; the
	// data pages are indices into it.
	dict        bool
	dictEntries int
	// The page being gathered.
	def, rep []int16
	levels   int     // levels (values and nulls) in it
	rows     int     // records in it
	values   []byte  // PLAIN values; DELTA_LENGTH's bytes
	lengths  []int32 // DELTA_LENGTH's lengths
	idx      []int32 // dictionary indices
	bools    []bool
	// rowsWritten: records of the pages written, the next page's first.
	rowsWritten int64
	compressed  int64 // bytes of the pages written, compressed
	page, comp  []byte
	statsBA     []parquet.ByteArray
}

func newChunkWriter(cm *metadata.ColumnChunkMetaDataBuilder, pager file.PageWriter, props *parquet.WriterProperties) *chunkWriter {
	d := cm.Descr()
	ch := &chunkWriter{descr: d, meta: cm, pager: pager, enc: props.EncodingFor(d.Path()),
		maxDef: d.MaxDefinitionLevel(), maxRep: d.MaxRepetitionLevel(),
		signed: d.SortOrder() == schema.SortSIGNED, maxStats: int(props.MaxStatsSizeFor(d.Path()))}
	if ch.enc != parquet.Encodings.DeltaLengthByteArray {
		ch.enc = parquet.Encodings.Plain
	}
	if props.StatisticsEnabledFor(d.Path()) && d.SortOrder() != schema.SortUNKNOWN {
		ch.pageStats = metadata.NewStatistics(d, props.Allocator())
		ch.chunkStats = metadata.NewStatistics(d, props.Allocator())
	}
	return ch
}

// leafValues is a batch's values for one leaf, the nulls left out: one
// of its slices is set, by the leaf's type. Byte arrays come as spans of
// arena, or (a map's keys) as slices.
type leafValues struct {
	spans []span
	arena []byte
	ba    []parquet.ByteArray
	i64   []int64
	i32   []int32
	f64   []float64
	bl    []bool
}

func (v *leafValues) len() int {
	switch {
	case v.spans != nil:
		return len(v.spans)
	case v.ba != nil:
		return len(v.ba)
	case v.i64 != nil:
		return len(v.i64)
	case v.i32 != nil:
		return len(v.i32)
	case v.f64 != nil:
		return len(v.f64)
	}
	return len(v.bl)
}

// levelsPerStep is how many levels go into a page between checks of its
// size: pages end at a record's start after about dataPageBytes of
// values.
const levelsPerStep = 1024

// write adds a batch: its values, and its levels (nil for a required,
// unrepeated column, whose levels are its values).
func (ch *chunkWriter) write(v leafValues, def, rep []int16) error {
	levels := v.len()
	if ch.maxDef > 0 {
		levels = len(def)
	}
	for at, val := 0, 0; at < levels; {
		end := min(at+levelsPerStep, levels)
		for ch.maxRep > 0 && end < levels && rep[end] != 0 {
			end++
		}
		n := end - at
		if ch.maxDef > 0 {
			n = 0
			for _, l := range def[at:end] {
				if l == ch.maxDef {
					n++
				}
			}
			ch.def = append(ch.def, def[at:end]...)
			if ch.maxRep > 0 {
				ch.rep = append(ch.rep, rep[at:end]...)
			}
		}
		ch.addValues(v, val, val+n, end-at-n)
		ch.levels += end - at
		ch.rows += records(rep, at, end)
		val += n
		at = end
		if len(ch.values)+4*len(ch.lengths)+len(ch.bools)/8 >= dataPageBytes {
			if err := ch.flushPage(); err != nil {
				return err
			}
		}
	}
	return nil
}

// records counts the records that start in levels [at, end).
func records(rep []int16, at, end int) int {
	if rep == nil {
		return end - at
	}
	n := 0
	for _, r := range rep[at:end] {
		if r == 0 {
			n++
		}
	}
	return n
}

// addValues adds values [from, to) of v, of a step that has nulls nulls.
func (ch *chunkWriter) addValues(v leafValues, from, to, nulls int) {
	switch {
	case v.spans != nil:
		spans := v.spans[from:to]
		if ch.enc == parquet.Encodings.DeltaLengthByteArray {
			// A column's own bytes hold its values one after the other
			// (col.own): the lengths, then the bytes in one copy.
			contiguous := true
			for k, s := range spans {
				ch.lengths = append(ch.lengths, int32(s.end-s.start))
				contiguous = contiguous && (k == 0 || s.start == spans[k-1].end)
			}
			switch {
			case len(spans) == 0:
			case contiguous:
				ch.values = append(ch.values, v.arena[spans[0].start:spans[len(spans)-1].end]...)
			default:
				for _, s := range spans {
					ch.values = append(ch.values, v.arena[s.start:s.end]...)
				}
			}
		} else {
			for _, s := range spans {
				b := v.arena[s.start:s.end]
				ch.values = binary.LittleEndian.AppendUint32(ch.values, uint32(len(b)))
				ch.values = append(ch.values, b...)
			}
		}
		if ch.pageStats != nil {
			ch.statsBA = ch.statsBA[:0]
			for _, s := range spans {
				ch.statsBA = append(ch.statsBA, v.arena[s.start:s.end])
			}
			ch.pageStats.(*metadata.ByteArrayStatistics).Update(ch.statsBA, int64(nulls))
		}
	case v.ba != nil:
		for _, b := range v.ba[from:to] {
			if ch.enc == parquet.Encodings.DeltaLengthByteArray {
				ch.lengths = append(ch.lengths, int32(len(b)))
			} else {
				ch.values = binary.LittleEndian.AppendUint32(ch.values, uint32(len(b)))
			}
			ch.values = append(ch.values, b...)
		}
		if ch.pageStats != nil {
			ch.pageStats.(*metadata.ByteArrayStatistics).Update(v.ba[from:to], int64(nulls))
		}
	case v.i64 != nil:
		ch.values = appendPlain(ch.values, v.i64[from:to])
		if ch.pageStats != nil {
			ch.pageStats.(*metadata.Int64Statistics).Update(v.i64[from:to], int64(nulls))
		}
	case v.i32 != nil:
		ch.values = appendPlain(ch.values, v.i32[from:to])
		if ch.pageStats != nil {
			ch.pageStats.(*metadata.Int32Statistics).Update(v.i32[from:to], int64(nulls))
		}
	case v.f64 != nil:
		ch.values = appendPlain(ch.values, v.f64[from:to])
		if ch.pageStats != nil {
			ch.pageStats.(*metadata.Float64Statistics).Update(v.f64[from:to], int64(nulls))
		}
	case v.bl != nil:
		ch.bools = append(ch.bools, v.bl[from:to]...)
		if ch.pageStats != nil {
			ch.pageStats.(*metadata.BooleanStatistics).Update(v.bl[from:to], int64(nulls))
		}
	default:
		if ch.pageStats != nil {
			ch.pageStats.IncNulls(int64(nulls))
		}
	}
}

// writeDictionary writes the chunk's dictionary page: entries values,
// PLAIN-encoded in plain. The data pages that follow are indices into it.
func (ch *chunkWriter) writeDictionary(plain []byte, entries int) error {
	if ch.dict || ch.levels != 0 || ch.rowsWritten != 0 {
		return fmt.Errorf("a dictionary after the chunk's first page")
	}
	page := file.NewDictionaryPage(memory.NewBufferBytes(plain), int32(entries), parquet.Encodings.Plain)
	if _, err := ch.pager.WriteDictionaryPage(page); err != nil {
		return err
	}
	ch.dict, ch.dictEntries = true, entries
	return nil
}

// writeIndices adds dictionary indices idx, one per value present in
// def (one per level for a required column), with their levels. stats,
// if the column has statistics, gives them the values.
func (ch *chunkWriter) writeIndices(idx []int32, def, rep []int16, stats func(metadata.TypedStatistics)) error {
	if !ch.dict {
		return fmt.Errorf("indices without a dictionary")
	}
	ch.idx = append(ch.idx, idx...)
	levels := len(idx)
	if ch.maxDef > 0 {
		levels = len(def)
		ch.def = append(ch.def, def...)
		if ch.maxRep > 0 {
			ch.rep = append(ch.rep, rep...)
		}
	}
	ch.levels += levels
	ch.rows += records(rep, 0, levels)
	if ch.pageStats != nil && stats != nil {
		stats(ch.pageStats)
	}
	return nil
}

// flushPage encodes the page gathered (levels, then values), compresses
// it and writes it.
func (ch *chunkWriter) flushPage() error {
	if ch.levels == 0 {
		return nil
	}
	p := ch.page[:0]
	if ch.maxRep > 0 {
		p = appendLevels(p, ch.rep, ch.maxRep)
	}
	if ch.maxDef > 0 {
		p = appendLevels(p, ch.def, ch.maxDef)
	}
	enc := ch.enc
	switch {
	case ch.dict:
		enc = parquet.Encodings.RLEDict
		p = appendIndices(p, ch.idx, ch.dictEntries)
	case ch.enc == parquet.Encodings.DeltaLengthByteArray:
		p = appendDeltaInt32(p, ch.lengths)
		p = append(p, ch.values...)
	case ch.descr.PhysicalType() == parquet.Types.Boolean:
		for i := 0; i < len(ch.bools); i += 8 {
			var b byte
			for k, v := range ch.bools[i:min(i+8, len(ch.bools))] {
				if v {
					b |= 1 << k
				}
			}
			p = append(p, b)
		}
	default:
		p = append(p, ch.values...)
	}
	ch.page = p
	if len(p) > math.MaxInt32 {
		return fmt.Errorf("a page of %d bytes", len(p))
	}
	if n := s2.MaxEncodedLen(len(p)); cap(ch.comp) < n {
		ch.comp = make([]byte, n)
	}
	data := s2.EncodeSnappy(ch.comp[:cap(ch.comp)], p)
	var stats metadata.EncodedStatistics
	if ch.pageStats != nil {
		var err error
		if stats, err = ch.pageStats.Encode(); err != nil {
			return err
		}
		stats.ApplyStatSizeLimits(ch.maxStats)
		stats.Signed = ch.signed
		ch.chunkStats.Merge(ch.pageStats)
		ch.pageStats.Reset()
	}
	page := file.NewDataPageV1WithConfig(memory.NewBufferBytes(data), parquet.Encodings.RLE, parquet.Encodings.RLE, file.DataPageConfig{
		Num: int32(ch.levels), Encoding: enc, UncompressedSize: int32(len(p)), Stats: stats, FirstRowIndex: ch.rowsWritten})
	written, err := ch.pager.WriteDataPage(page)
	if err != nil {
		return err
	}
	ch.compressed += written
	ch.rowsWritten += int64(ch.rows)
	ch.def, ch.rep, ch.values, ch.lengths, ch.idx, ch.bools = ch.def[:0], ch.rep[:0], ch.values[:0], ch.lengths[:0], ch.idx[:0], ch.bools[:0]
	ch.levels, ch.rows = 0, 0
	return nil
}

// close writes the last page and hands the chunk to the file: its
// statistics, then its pages and metadata.
func (ch *chunkWriter) close() error {
	if err := ch.flushPage(); err != nil {
		return err
	}
	if ch.chunkStats != nil && ch.rowsWritten > 0 {
		stats, err := ch.chunkStats.Encode()
		if err != nil {
			return err
		}
		stats.ApplyStatSizeLimits(ch.maxStats)
		stats.Signed = ch.signed
		if stats.IsSet() {
			ch.meta.SetStats(stats)
		}
	}
	return ch.pager.Close(ch.dict, false)
}
