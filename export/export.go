// Package export writes sstables as Parquet datasets, so that an engine
// people already run (DuckDB, Spark, Trino) answers questions across the
// sstables of many nodes: the largest partitions of the cluster, where the
// tombstones pile up, what converting every node to oa would give back.
//
// Three datasets, each Hive-partitioned by keyspace and table:
//
//	partitions/keyspace=K/table=T/part-<node>-<sstable>.parquet  one row per partition
//	cells/keyspace=K/table=T/part-<node>-<sstable>.parquet       one row per cell, deletion, liveness and marker
//	sstables/keyspace=K/table=T/part-<node>-<sstable>.parquet    one row per sstable
//
// so that the exports of many nodes, copied into one place, are one
// dataset. docs/export.md lists every column. The values are the
// project's own: the counts are `partitions`' (internal/inspect), the
// value text is sstabledump's (format/cqltype's renderers), the sstable
// facts are `metadata`'s, the savings `savings`' (given by the caller
// through Options.Savings, as convert is a write feature).
//
// Every file is written under a hidden name, fsynced and renamed into
// place, so a killed export leaves no file an engine would read. Memory
// is bounded: records go to Parquet in batches and row groups of at most
// 32 MiB, whatever the sstable's size.
//
// The partitions and cells datasets are read from a Source: an sstable
// (SSTableSource), or a table's merged view (a MergedSource, which the
// command makes of the merge engine: this package reads the format layer
// only), written as one file per table whose cells each name the sstable
// they came from.
package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/vfs"
)

// Names are the keyspace and table an sstable belongs to: the Hive
// partition values of its files.
type Names struct {
	Keyspace, Table string
	// PartitionKey and Clustering are the names of the table's partition
	// key and clustering columns, in order, when a schema gives them (the
	// node's system_schema, a --schema file): the columns whose values
	// the key and clustering columns of every dataset hold. Each file
	// keeps them in its key-value metadata (sstabletool.key_columns,
	// sstabletool.clustering_columns, JSON arrays); nil PartitionKey
	// writes neither, as the sstable alone does not name them.
	PartitionKey, Clustering []string
}

// Options control an export.
type Options struct {
	// Node is the node column's value and part of every file name
	// (required).
	Node string
	// Datasets to write; 0 means All.
	Datasets Datasets
	// Now is the time, in seconds since the epoch, at which TTLs count as
	// expired (the partitions dataset's *_ttl_expired) and the droppable
	// tombstones are estimated; 0 means the clock's.
	Now int64
	// Savings, when set, gives the sstables dataset's savings column: the
	// bytes on disk a conversion to oa would save. Nil leaves it null.
	Savings func(s *sstable.SSTable) (int64, error)
	// Progress, when set, is called now and then with the position
	// reached in the source (Source.Length's unit) and that length.
	Progress func(done, total int64)

	fs vfs.FS // tests inject faults here (internal/vfs/errorfs); nil means the disk
}

// File is one file an export wrote.
type File struct {
	Dataset string `json:"dataset"`
	Path    string `json:"path"`
	Rows    int64  `json:"rows"`
	Bytes   int64  `json:"bytes"`
}

// Exporter writes the datasets of sstables under one directory.
type Exporter struct {
	dir string
	o   Options
	fs  vfs.FS
	// written maps each file written so far to its source, so that two
	// sources never write one file (the same sstable name in a table's
	// directory and in one of its snapshots, say).
	written map[string]string
}

// New returns an Exporter writing under dir, which is created with the
// first file.
func New(dir string, o Options) (*Exporter, error) {
	if err := checkNode(o.Node); err != nil {
		return nil, err
	}
	if o.Datasets == 0 {
		o.Datasets = All
	}
	if o.Now == 0 {
		o.Now = time.Now().Unix()
	}
	return &Exporter{dir: dir, o: o, fs: vfs.Or(o.fs), written: map[string]string{}}, nil
}

// checkNode refuses a node name that cannot be part of a file name, or
// would make the files hidden.
func checkNode(n string) error {
	switch {
	case n == "":
		return errors.New("export: no node name")
	case n[0] == '.' || n[0] == '_':
		return fmt.Errorf("export: node name %q starts with %q: engines would skip the files", n, n[0])
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c == '/' || c == os.PathSeparator || c < 0x20 {
			return fmt.Errorf("export: node name %q holds %q, which a file name cannot", n, c)
		}
	}
	return nil
}

// path is the file of one dataset for a source.
func (e *Exporter) path(dataset string, n Names, source string) string {
	return filepath.Join(e.dir, dataset, "keyspace="+hivePathValue(n.Keyspace), "table="+hivePathValue(n.Table),
		"part-"+e.o.Node+"-"+source+".parquet")
}

// SSTable exports one sstable: its partitions and cells (as they are
// selected) and its row of the sstables dataset. On an error nothing of
// this sstable becomes visible, and the error names it.
func (e *Exporter) SSTable(s *sstable.SSTable, n Names) ([]File, error) {
	src := SSTableSource(s)
	var totals *tableTotals
	var files []File
	if e.o.Datasets&(Partitions|Cells) != 0 {
		var err error
		if files, totals, err = e.source(src, n, s.Path("Data.db")); err != nil {
			return nil, err
		}
	}
	if e.o.Datasets&SSTables != 0 {
		f, err := e.sstableRow(s, src.Name(), n, totals)
		if err != nil {
			return files, fmt.Errorf("%s: %w", s.Path("Data.db"), err)
		}
		files = append(files, f)
	}
	return files, nil
}

// Source exports the partitions and cells datasets (as they are selected)
// of any source: an sstable, or a table's merged view (a MergedSource);
// from names it in errors (an sstable's path, a table's directory).
func (e *Exporter) Source(src Source, n Names, from string) ([]File, error) {
	if e.o.Datasets&(Partitions|Cells) == 0 {
		return nil, nil
	}
	files, _, err := e.source(src, n, from)
	return files, err
}

// Metadata exports s's row of the sstables dataset alone, when it is
// selected: what SSTable writes there, without the totals of a scan of s
// (they are null). A merged export writes it for each sstable merged.
func (e *Exporter) Metadata(s *sstable.SSTable, n Names) ([]File, error) {
	if e.o.Datasets&SSTables == 0 {
		return nil, nil
	}
	f, err := e.sstableRow(s, SSTableSource(s).Name(), n, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Path("Data.db"), err)
	}
	return []File{f}, nil
}

// claim reserves the output files of one source.
func (e *Exporter) claim(paths []string, from string) error {
	for _, p := range paths {
		if prev, ok := e.written[p]; ok {
			return fmt.Errorf("%s would overwrite %s, written from %s in this export: two sstables of one name in one table (a snapshot beside the live one?)", from, p, prev)
		}
	}
	for _, p := range paths {
		e.written[p] = from
	}
	return nil
}

// jsonNames is a list of column names as a JSON array ([] for none).
func jsonNames(names []string) string {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names) // strings always marshal
	return string(b)
}

// create starts one file, creating its partition directories.
func (e *Exporter) create(path string, specs []spec, words map[int][][]byte, src string, n Names) (*parquetFile, error) {
	if err := e.fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	meta := map[string]string{"sstabletool.node": e.o.Node, "sstabletool.keyspace": n.Keyspace, "sstabletool.table": n.Table, "sstabletool.source": src}
	if len(n.PartitionKey) > 0 {
		meta["sstabletool.key_columns"] = jsonNames(n.PartitionKey)
		meta["sstabletool.clustering_columns"] = jsonNames(n.Clustering)
	}
	return createParquet(e.fs, path, specs, words, meta)
}
