package format

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Index components are the files of a secondary index that Cassandra keeps
// beside an sstable, named with the sstable's prefix and listed in its
// TOC.txt (SSTable.addComponents): they index that sstable's rows by row
// id or by position, so they are only right for the Data.db they were
// built from. Two kinds exist:
//
//   - SAI, storage-attached indexes (Cassandra 5.0,
//     index/sai/disk/format/Version.java's defaultFileNameFormat):
//     "SAI+<version>+<component>.db" for the per-sstable components every
//     SAI index of the table shares, "SAI+<version>+<index>+<component>.db"
//     for each index's own (IndexComponent.java names them);
//   - SASI (3.4 to 4.1, index/sasi/conf/ColumnIndex.java's
//     FILE_NAME_FORMAT): "SI_<index>.db", one file per index.
//
// The third kind, Cassandra's own secondary indexes (CassandraIndex), are
// tables of their own: their sstables lie in a hidden directory
// ".<index>" inside the table's (Directories.java,
// SECONDARY_INDEX_NAME_SEPARATOR), see IndexTableOf.

// IndexKind is the kind of index a component belongs to.
type IndexKind string

// The index kinds whose files sit beside an sstable.
const (
	IndexSAI  IndexKind = "SAI"
	IndexSASI IndexKind = "SASI"
)

// SAI's per-sstable components (IndexComponent.java; V1OnDiskFormat's
// SKINNY_PER_SSTABLE_COMPONENTS and, for tables with clustering columns,
// WIDE_PER_SSTABLE_COMPONENTS).
const (
	SAIGroupComplete            = "GroupComplete"
	SAIGroupMeta                = "GroupMeta"
	SAIRowToToken               = "RowToToken"
	SAIRowToPartition           = "RowToPartition"
	SAIPartitionToSize          = "PartitionToSize"
	SAIPartitionKeyBlocks       = "PartitionKeyBlocks"
	SAIPartitionKeyBlockOffsets = "PartitionKeyBlockOffsets"
	SAIClusteringKeyBlocks      = "ClusteringKeyBlocks"
	SAIClusteringKeyBlockOffs   = "ClusteringKeyBlockOffsets"
)

// SAI's per-index components (IndexComponent.java; V1OnDiskFormat's
// LITERAL_COMPONENTS, NUMERIC_COMPONENTS and VECTOR_COMPONENTS).
const (
	SAIColumnComplete    = "ColumnComplete"
	SAIMeta              = "Meta"
	SAITermsData         = "TermsData"
	SAIBalancedTree      = "BalancedTree"
	SAIPostingLists      = "PostingLists"
	SAICompressedVectors = "CompressedVectors"
)

var (
	saiPerSSTable = map[string]bool{SAIGroupComplete: true, SAIGroupMeta: true, SAIRowToToken: true, SAIRowToPartition: true,
		SAIPartitionToSize: true, SAIPartitionKeyBlocks: true, SAIPartitionKeyBlockOffsets: true,
		SAIClusteringKeyBlocks: true, SAIClusteringKeyBlockOffs: true}
	saiPerIndex = map[string]bool{SAIColumnComplete: true, SAIMeta: true, SAITermsData: true, SAIBalancedTree: true,
		SAIPostingLists: true, SAICompressedVectors: true}
)

// SAIPerSSTableComponents lists the per-sstable components a complete SAI
// build writes (V1OnDiskFormat.perSSTableIndexComponents): wide tables (with
// clustering columns) add the partition sizes and the clustering key blocks.
func SAIPerSSTableComponents(hasClustering bool) []string {
	out := []string{SAIGroupComplete, SAIGroupMeta, SAIRowToToken, SAIRowToPartition, SAIPartitionKeyBlocks, SAIPartitionKeyBlockOffsets}
	if hasClustering {
		out = append(out, SAIPartitionToSize, SAIClusteringKeyBlocks, SAIClusteringKeyBlockOffs)
	}
	return out
}

// IndexComponent is one file of an SAI or SASI index, as its component
// name (the file name after the sstable's prefix) says.
type IndexComponent struct {
	Component string    // "SAI+aa+val_idx+TermsData.db", "SI_val_idx.db"
	Kind      IndexKind // IndexSAI or IndexSASI
	// Version is SAI's on-disk format version ("aa"); SASI's is inside
	// the file.
	Version string
	// Index is the index's name; "" for SAI's per-sstable components,
	// which every SAI index of the table shares.
	Index string
	// Part is SAI's component ("TermsData", "GroupComplete"...); "" for
	// SASI.
	Part string
}

// PerSSTable reports whether c is one of SAI's per-sstable components.
func (c IndexComponent) PerSSTable() bool { return c.Kind == IndexSAI && c.Index == "" }

// CompletionMarker reports whether c is one of SAI's build completion
// markers (GroupComplete, ColumnComplete), whose presence Cassandra takes
// for a finished build (V1OnDiskFormat.isPerColumnIndexBuildComplete).
func (c IndexComponent) CompletionMarker() bool {
	return c.Kind == IndexSAI && (c.Part == SAIGroupComplete || c.Part == SAIColumnComplete)
}

// ParseIndexComponent reads a component name (what follows an sstable's
// prefix in a file name, or a TOC.txt line) as an SAI or SASI component.
// ok is false for any other name, and for an SAI name whose component
// Cassandra does not know (IndexComponent.Type's pattern only matches
// those).
func ParseIndexComponent(component string) (c IndexComponent, ok bool) {
	const ext = ".db"
	if !strings.HasSuffix(component, ext) {
		return c, false
	}
	body := strings.TrimSuffix(component, ext)
	if name, found := strings.CutPrefix(body, "SI_"); found && name != "" {
		return IndexComponent{Component: component, Kind: IndexSASI, Index: name}, true
	}
	rest, found := strings.CutPrefix(body, "SAI+")
	if !found {
		return c, false
	}
	version, rest, found := strings.Cut(rest, "+")
	if !found || version == "" {
		return c, false
	}
	c = IndexComponent{Component: component, Kind: IndexSAI, Version: version}
	if i := strings.LastIndexByte(rest, '+'); i >= 0 {
		c.Index, c.Part = rest[:i], rest[i+1:]
		return c, c.Index != "" && saiPerIndex[c.Part]
	}
	c.Part = rest
	return c, saiPerSSTable[c.Part]
}

// IndexComponentsOf picks the SAI and SASI components out of a list of
// component names (TOC.txt's lines), sorted by name.
func IndexComponentsOf(components []string) []IndexComponent {
	var out []IndexComponent
	for _, name := range components {
		if c, ok := ParseIndexComponent(name); ok {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Component < out[j].Component })
	return out
}

// IndexComponents lists the SAI and SASI files of the sstable in its
// directory, sorted by component name, whether or not TOC.txt lists them:
// Cassandra's SAI and SASI find their files by name, not through the TOC,
// so a rewrite must see every one. It reads the whole directory; a scan
// of many sstables takes them from TOC.txt (IndexComponentsOf). A
// directory that cannot be read is an error.
func (d Descriptor) IndexComponents() ([]IndexComponent, error) {
	ents, err := os.ReadDir(d.Dir)
	if err != nil {
		return nil, err
	}
	prefix := d.Prefix()
	var names []string
	for _, e := range ents {
		if name, ok := strings.CutPrefix(e.Name(), prefix); ok && !e.IsDir() {
			names = append(names, name)
		}
	}
	return IndexComponentsOf(names), nil
}

// IndexTableOf says whether dir is the directory of a secondary index's
// own table (Cassandra's CassandraIndex): <table dir>/.<index>/
// (Directories.java puts an index table, named <table>.<index>, in a
// directory of its index name with the separator "." in front). It returns
// the index's name and the base table's directory.
func IndexTableOf(dir string) (index string, tableDir string, ok bool) {
	base := filepath.Base(dir)
	if len(base) < 2 || base[0] != '.' || base == ".." || strings.HasPrefix(base, StagingDirPrefix) {
		return "", "", false
	}
	return base[1:], filepath.Dir(dir), true
}
