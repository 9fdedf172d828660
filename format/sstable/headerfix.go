package sstable

import (
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
)

// A HeaderFix is a column whose type in the serialization header was read
// differently from how it is stored, and why.
type HeaderFix struct {
	Column string `json:"column"`
	Static bool   `json:"static"`
	Stored string `json:"stored"` // the header's AbstractType string
	ReadAs string `json:"read_as"`
	Why    string `json:"why"`
}

func (f HeaderFix) String() string {
	return fmt.Sprintf("column %s: the serialization header records %s; read as %s: %s", f.Column, f.Stored, f.ReadAs, f.Why)
}

// HeaderFixes lists the corrections made to the serialization header.
func (s *SSTable) HeaderFixes() []HeaderFix { return s.headerFixes }

// A ForeignType is a type class in the serialization header that is not
// one of Cassandra's: a custom AbstractType, or a damaged class name (which
// still parses, as a custom type). Cassandra loads each class by name and
// refuses the sstable when it cannot; the decoder reads such values as
// bytes.
type ForeignType struct {
	Column string // "the partition key", "clustering column 0", `column "v"`, `static column "s"`
	Class  string // the unknown class, as stored
}

// ForeignTypes lists the type classes of the serialization header that are
// not Cassandra's (verify reports each; read commands warn).
func (s *SSTable) ForeignTypes() []ForeignType {
	h := s.statistics.Header
	if h == nil {
		return nil
	}
	var out []ForeignType
	check := func(what string, tn stats.TypeName) {
		t, err := typeOf(tn)
		if err != nil {
			return // Open would have failed
		}
		for _, c := range t.UnknownClasses() {
			out = append(out, ForeignType{Column: what, Class: c})
		}
	}
	check("the partition key", h.KeyType)
	for i, t := range h.ClusteringTypes {
		check(fmt.Sprintf("clustering column %d", i), t)
	}
	for _, c := range h.StaticColumns {
		check(fmt.Sprintf("static column %q", c.Name), c.Type)
	}
	for _, c := range h.RegularColumns {
		check(fmt.Sprintf("column %q", c.Name), c.Type)
	}
	return out
}

// ApplyHeaderFixes records in h, a serialization header written for this
// sstable's data (a converted copy of Stats().Header), the column types
// the decoder reads the data with wherever a HeaderFix changed them, as
// 4.0's SSTableHeaderFix rewrote 3.x headers. A rewrite that copies row
// bodies must do this: a frozen UDT's cells are one cell without a path,
// and a header still saying UserType(...) makes every later reader (which
// trusts headers from 4.0 on) decode them as a complex column.
func (s *SSTable) ApplyHeaderFixes(h *stats.Header) {
	for _, f := range s.headerFixes {
		cols, types, hcols := s.schema.Regular, s.regularTypes, h.RegularColumns
		if f.Static {
			cols, types, hcols = s.schema.Static, s.staticTypes, h.StaticColumns
		}
		for i := range cols {
			if cols[i].Name != f.Column {
				continue
			}
			for j := range hcols {
				if string(hcols[j].Name) == f.Column {
					hcols[j].Type = stats.TypeName{Class: types[i].Class, Type: types[i]}
				}
			}
		}
	}
}

// frozenUDTSample bounds how much of Data.db the frozen-UDT check decodes:
// enough rows to see every column of a table several times, little enough
// that opening a large sstable stays instant.
const (
	frozenUDTSampleBytes       = 4 << 20
	frozenUDTSampleUnfiltereds = 20000
)

// fixFrozenUDTHeader repairs what CASSANDRA-15035 left in sstables written
// by Cassandra 3.x: a top-level frozen<udt> column recorded in the header
// as a plain UserType(...), the same string as a non-frozen UDT. The header
// cannot tell the two apart; the cells can (a frozen UDT is one cell with
// no path, a non-frozen one a complex column of cells with paths). Cassandra
// 3.x read such columns with the schema's type, and 4.0's SSTableHeaderFix
// rewrote the headers from the schema; without a schema this decodes the
// start of Data.db both ways and keeps the reading that works.
func (s *SSTable) fixFrozenUDTHeader() error {
	if s.desc.Version.HasMaxCompressedLength { // na and later: written by 4.0+
		return nil
	}
	var cands []candidate
	for i, t := range s.staticTypes {
		if t.Kind == cqltype.UDT && t.IsMultiCell() {
			cands = append(cands, candidate{true, s.schema.Static[i].Name})
		}
	}
	for i, t := range s.regularTypes {
		if t.Kind == cqltype.UDT && t.IsMultiCell() {
			cands = append(cands, candidate{false, s.schema.Regular[i].Name})
		}
	}
	if len(cands) == 0 {
		return nil
	}
	// Try the header as stored, then every candidate frozen, then each
	// alone; the first reading that decodes the sample wins.
	trials := [][]candidate{nil, cands}
	if len(cands) > 1 {
		for _, c := range cands {
			trials = append(trials, []candidate{c})
		}
	}
	var headerErr error
	for n, frozen := range trials {
		sch := *s.schema
		sch.Static, _ = frozenColumns(s.schema.Static, s.staticTypes, frozen, true)
		sch.Regular, _ = frozenColumns(s.schema.Regular, s.regularTypes, frozen, false)
		err := s.decodesSample(&sch)
		if n == 0 {
			if err == nil {
				return nil
			}
			headerErr = err
			continue
		}
		if err != nil {
			continue
		}
		for _, c := range frozen {
			s.freezeColumn(c, "every cell of it in Data.db is a single cell without a path, which is how a frozen UDT is stored; "+
				"Cassandra 3.x recorded frozen UDTs as non-frozen in the header (CASSANDRA-15035), and the header as stored does not decode: "+headerErr.Error())
		}
		return nil
	}
	return nil // neither reading works: keep the header; reads report the error
}

// decodesSample decodes the start of Data.db with sch.
func (s *SSTable) decodesSample(sch *rows.Schema) error {
	dec := rows.NewDecoder(s.data.Cursor(0), sch)
	var h rows.PartitionHeader
	n := 0
	for n < frozenUDTSampleUnfiltereds && dec.Source().Pos() < frozenUDTSampleBytes {
		err := dec.ReadPartitionHeader(&h)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for {
			u, err := dec.Next(false)
			if err != nil {
				return err
			}
			if u == nil {
				break
			}
			n++
		}
	}
	return nil
}

// candidate names a static or regular column.
type candidate struct {
	static bool
	name   string
}

// frozenColumns returns copies of cols and their types with the named
// columns frozen, in Cassandra's column order: a frozen column is a simple
// one, and simple columns come before complex ones (Columns.java), which is
// the order 3.x wrote cells in, since it took the types from the schema.
func frozenColumns(cols []rows.Column, types []*cqltype.Type, frozen []candidate, static bool) ([]rows.Column, []*cqltype.Type) {
	outCols := append([]rows.Column(nil), cols...)
	byName := make(map[string]*cqltype.Type, len(cols))
	for i, c := range cols {
		byName[c.Name] = types[i]
		for _, f := range frozen {
			if f.static == static && f.name == c.Name {
				ft := cqltype.Frozen(types[i])
				byName[c.Name] = ft
				outCols[i].Complex = false
				outCols[i].Type = ft.Class
			}
		}
	}
	rows.SortColumns(outCols)
	outTypes := make([]*cqltype.Type, len(outCols))
	for i, c := range outCols {
		outTypes[i] = byName[c.Name]
	}
	return outCols, outTypes
}

// freezeColumn reads column c as frozen from now on.
func (s *SSTable) freezeColumn(c candidate, why string) {
	types, cols := s.regularTypes, s.schema.Regular
	if c.static {
		types, cols = s.staticTypes, s.schema.Static
	}
	var stored string
	for i := range cols {
		if cols[i].Name == c.name {
			stored = types[i].Class
		}
	}
	sch := *s.schema
	if c.static {
		sch.Static, s.staticTypes = frozenColumns(cols, types, []candidate{c}, true)
		cols, types = sch.Static, s.staticTypes
	} else {
		sch.Regular, s.regularTypes = frozenColumns(cols, types, []candidate{c}, false)
		cols, types = sch.Regular, s.regularTypes
	}
	s.schema = &sch
	for i := range cols {
		if cols[i].Name == c.name {
			s.headerFixes = append(s.headerFixes, HeaderFix{Column: c.name, Static: c.static, Stored: stored, ReadAs: types[i].CQL(), Why: why})
		}
	}
}

// FreezeColumn makes a column read as frozen because a schema says so, the
// way SSTableHeaderFix rewrote 3.x headers from the schema. It reports
// whether the column was multi-cell in the header (and so changed). Call
// it before any decoder is made.
func (s *SSTable) FreezeColumn(name string, why string) bool {
	for _, static := range []bool{false, true} {
		cols, types := s.schema.Regular, s.regularTypes
		if static {
			cols, types = s.schema.Static, s.staticTypes
		}
		for i := range cols {
			if cols[i].Name == name && types[i].IsMultiCell() {
				s.freezeColumn(candidate{static, name}, why)
				return true
			}
		}
	}
	return false
}
