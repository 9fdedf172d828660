package export

import (
	"os"
	"slices"
	"strconv"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/inspect"
)

// everyComponent is each component an sstable can have, for sizes when
// TOC.txt is missing.
var everyComponent = []string{format.ComponentData, format.ComponentIndex, format.ComponentSummary, format.ComponentFilter,
	format.ComponentStatistics, format.ComponentCompressionInfo, format.ComponentDigest, format.ComponentCRC,
	format.ComponentTOC, format.ComponentPartitions, format.ComponentRows}

// sstableRow writes s's file of the sstables dataset: metadata's facts
// (inspect.ReadMetadataWith, what `metadata --json` prints), the totals of
// the scan when there was one, and the savings.
func (e *Exporter) sstableRow(s *sstable.SSTable, name string, n Names, totals *tableTotals) (File, error) {
	m, err := inspect.ReadMetadataWith(s, inspect.MetadataOptions{Now: e.o.Now})
	if err != nil {
		return File{}, err
	}
	var saved int64 // negative when oa would be larger
	if e.o.Savings != nil {
		if saved, err = e.o.Savings(s); err != nil {
			return File{}, err
		}
	}
	path := e.path("sstables", n, name)
	if err := e.claim([]string{path}, s.Path(format.ComponentData)); err != nil {
		return File{}, err
	}
	pf, err := e.create(path, sstableSpecs, map[int][][]byte{sNode: {[]byte(e.o.Node)}, sSSTable: {[]byte(name)}, sVersion: {[]byte(m.Version)}}, s.Path(format.ComponentData), n)
	if err != nil {
		return File{}, err
	}
	c := pf.main.cols
	str := func(i int, v string) { pf.main.bytes(c[i], []byte(v)) }
	optInt := func(i int, v int64, ok bool) {
		if ok {
			c[i].int64(v)
		} else {
			c[i].null()
		}
	}
	str(sPath, m.Path)
	str(sFormat, m.Format)
	str(sGeneration, m.Generation)
	str(sPartitioner, m.Partitioner)
	comps := m.Components
	if len(comps) == 0 {
		comps = everyComponent
	}
	var names [][]byte
	var sizes []int64
	var total int64
	for _, comp := range comps {
		fi, err := os.Stat(s.Path(comp))
		if err != nil || !fi.Mode().IsRegular() || slices.ContainsFunc(names, func(b []byte) bool { return string(b) == comp }) {
			continue
		}
		names, sizes = append(names, []byte(comp)), append(sizes, fi.Size())
		total += fi.Size()
	}
	c[sComponentBytes].sizes(names, sizes)
	c[sBytes].int64(total)
	c[sDataBytes].int64(m.DataSize)
	c[sDataUncompressed].int64(m.UncompressedDataSize)
	if m.Compression != nil {
		str(sCompressor, m.Compression.Compressor)
		c[sCompressionRatio].double(m.Compression.Ratio)
	} else {
		c[sCompressor].null()
		c[sCompressionRatio].null()
	}
	kr := m.KeyRange
	if kr != nil {
		str(sFirstKey, kr.First)
		str(sLastKey, kr.Last)
	} else {
		c[sFirstKey].null()
		c[sLastKey].null()
	}
	murmur := s.Partitioner() == token.Murmur3
	for _, t := range []struct {
		i    int
		text string
	}{{sMinToken, firstToken(kr)}, {sMaxToken, lastToken(kr)}} {
		v, err := strconv.ParseInt(t.text, 10, 64)
		optInt(t.i, v, murmur && kr != nil && err == nil)
	}
	c[sMinTimestamp].int64(m.MinTimestamp)
	c[sMaxTimestamp].int64(m.MaxTimestamp)
	optInt(sMinLocalDeletion, m.MinLocalDeletionTime*1000, m.MinLocalDeletionTime != stats.NoDeletionTime)
	optInt(sMaxLocalDeletion, m.MaxLocalDeletionTime*1000, m.MaxLocalDeletionTime != stats.NoDeletionTime)
	c[sMinTTL].int64(m.MinTTL)
	c[sMaxTTL].int64(m.MaxTTL)
	c[sEstimatedPartitions].int64(m.EstimatedKeys)
	c[sTotalRows].int64(m.TotalRows)
	c[sDroppable].double(m.EstimatedDroppable)
	c[sRepairedAt].int64(m.RepairedAt)
	c[sLevel].int32(m.SSTableLevel)
	optInt(sPartitions, totalsOf(totals).partitions, totals != nil)
	optInt(sRows, totalsOf(totals).rows, totals != nil)
	optInt(sCells, totalsOf(totals).cells, totals != nil)
	optInt(sTombstones, totalsOf(totals).tombstones, totals != nil)
	optInt(sSavings, saved, e.o.Savings != nil)
	if _, err := pf.main.endRecord(); err != nil {
		pf.abort()
		return File{}, err
	}
	if err := pf.commit(); err != nil {
		return File{}, err
	}
	f := File{Dataset: "sstables", Path: pf.final, Rows: pf.rows, Bytes: pf.size()}
	return f, nil
}

func totalsOf(t *tableTotals) tableTotals {
	if t == nil {
		return tableTotals{}
	}
	return *t
}

func firstToken(kr *inspect.KeyRange) string {
	if kr == nil {
		return ""
	}
	return kr.FirstToken
}

func lastToken(kr *inspect.KeyRange) string {
	if kr == nil {
		return ""
	}
	return kr.LastToken
}
