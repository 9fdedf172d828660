package inspect

import (
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
)

// Index is an index whose files lie beside the sstable (SAI or SASI; see
// format.IndexComponent), as metadata, browse, savings and partitions
// list it. SAI's per-sstable components, which every SAI index of the
// table shares, are listed as an index of their own with no name.
type Index struct {
	Name string `json:"name"` // "" for SAI's shared per-sstable components
	Kind string `json:"kind"` // SAI or SASI
	// Column is what the index is on, as the schema's index target says
	// ("val", "values(m)"); "" without a schema that names it.
	Column     string           `json:"column,omitempty"`
	Bytes      int64            `json:"bytes"`
	Components []IndexComponent `json:"components"`
}

// IndexComponent is one file of an index.
type IndexComponent struct {
	Component string `json:"component"`
	Bytes     int64  `json:"bytes"` // -1: TOC.txt lists it, the file is not there
}

// Label names the index for output: "SAI val_idx on val", "SAI
// per-sstable components".
func (ix Index) Label() string {
	switch {
	case ix.Name == "":
		return ix.Kind + " per-sstable components (shared by the table's SAI indexes)"
	case ix.Column != "":
		return ix.Kind + " " + ix.Name + " on " + ix.Column
	}
	return ix.Kind + " " + ix.Name
}

// IndexesOf lists the sstable's index files by index (SAI's shared
// per-sstable components first, then by name), their sizes summed; table,
// when not nil, names each index's column (its target option, as
// system_schema.indexes holds it).
func IndexesOf(s *sstable.SSTable, table *cqltype.TableSchema) []Index {
	var out []Index
	at := map[string]int{}
	for _, f := range s.IndexFiles() {
		key := string(f.Kind) + "\x00" + f.Index
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, Index{Name: f.Index, Kind: string(f.Kind), Column: indexTarget(table, f.Index)})
		}
		out[i].Components = append(out[i].Components, IndexComponent{Component: f.Component, Bytes: f.Size})
		if f.Size > 0 {
			out[i].Bytes += f.Size
		}
	}
	slices.SortStableFunc(out, func(a, b Index) int {
		if (a.Name == "") != (b.Name == "") {
			if a.Name == "" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Kind+a.Name, b.Kind+b.Name)
	})
	return out
}

// IndexBytes sums the bytes of the sstable's index files.
func IndexBytes(ixs []Index) int64 {
	var n int64
	for _, ix := range ixs {
		n += ix.Bytes
	}
	return n
}

// indexTarget is the target option of the table's index name ("" when
// the schema does not say).
func indexTarget(table *cqltype.TableSchema, name string) string {
	if table == nil || name == "" {
		return ""
	}
	for _, ix := range table.Indexes {
		if ix.Name == name {
			return ix.Target()
		}
	}
	return ""
}
