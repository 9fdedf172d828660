package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/export"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/merge"
)

// mergedSource is a table's merged view (the merge engine's scan, as dump
// --merge prints it) as the export's source: one file per table in the
// partitions and cells datasets, each cell naming the sstable it came
// from.
type mergedSource struct {
	t    *merge.Table
	o    merge.Options
	name string
	sc   *merge.Scanner
}

func (m *mergedSource) Name() string                     { return m.name }
func (m *mergedSource) Version() string                  { return "merged" }
func (m *mergedSource) Schema() *rows.Schema             { return m.t.Schema() }
func (m *mergedSource) KeyType() *cqltype.Type           { return m.t.KeyType() }
func (m *mergedSource) ClusteringTypes() []*cqltype.Type { return m.t.ClusteringTypes() }
func (m *mergedSource) StaticTypes() []*cqltype.Type     { return m.t.StaticTypes() }
func (m *mergedSource) RegularTypes() []*cqltype.Type    { return m.t.RegularTypes() }
func (m *mergedSource) Partitioner() token.Partitioner   { return m.t.Partitioner() }
func (m *mergedSource) Length() int64                    { return m.t.DataLength() }

func (m *mergedSource) Reached() int64 {
	if m.sc == nil {
		return 0
	}
	return m.sc.Pos()
}

// SSTables names the merged sstables as the sstable column does, in the
// merge's order (provenance's indexes).
func (m *mergedSource) SSTables() []string {
	var names []string
	for _, s := range m.t.SSTables() {
		names = append(names, export.SSTableSource(s).Name())
	}
	return names
}

func (m *mergedSource) EachPartition(fn func(h *rows.PartitionHeader, r export.PartitionRows) error) error {
	sc, err := m.t.Scan(m.o)
	if err != nil {
		return err
	}
	m.sc = sc
	for {
		p, err := sc.Next()
		if err != nil || p == nil {
			return err
		}
		if err := fn(&p.Header, &mergedExportRows{p: p}); err != nil {
			return err
		}
	}
}

// mergedExportRows are a merged partition's rows with their provenance.
type mergedExportRows struct {
	p   *merge.Partition
	org export.Origin
}

func (r *mergedExportRows) Next(bool) (*rows.Unfiltered, error) { return r.p.Next() }

// Pos is -1: a merged partition has no one place in a Data.db (the
// partitions dataset's offset and size are null).
func (r *mergedExportRows) Pos() int64 { return -1 }

func (r *mergedExportRows) Origin() *export.Origin {
	p := r.p.Provenance()
	if p == nil {
		r.org = export.Origin{Liveness: -1, Deletion: -1, End: -1, Start: -1}
		return &r.org
	}
	r.org = export.Origin{Liveness: p.Liveness, Deletion: p.Deletion, End: p.End, Start: p.Start,
		Cells: p.Cells, ComplexDeletions: p.ComplexDeletions}
	return &r.org
}

// mergedName is a merged table's name in its files
// (part-<node>-<name>.parquet): merged for a table's own directory;
// merged-snapshot-<name> or merged-backups for a snapshot's or the
// backups' sstables (-r with --snapshots or --backups merges each on its
// own), so that they do not replace the table's files.
func mergedName(t *merge.Table) string {
	dir := t.SSTables()[0].Desc().Dir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	td := format.TableOf(dir)
	rel, err := filepath.Rel(td.BaseDir(), dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "merged"
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if td.Index != "" {
		// A secondary index's table: .<index>/ in the table's directory,
		// or in a snapshot's or the backups'.
		parts = parts[:len(parts)-1]
		if len(parts) == 0 {
			return "merged"
		}
	}
	switch {
	case parts[0] == format.BackupsDir:
		return "merged-backups"
	case len(parts) == 2 && parts[0] == format.SnapshotsDir:
		return "merged-snapshot-" + parts[1]
	}
	return "merged"
}

// exportMerged is export --merge: each table of the sstables given (with
// -r each table directory) merged, its partitions and cells in one file
// per dataset, and its sstables' rows of the sstables dataset as export
// writes them without --merge (the scan's totals left null).
func exportMerged(c *cli.Context, ex *export.Exporter, sf *inspect.SchemaSource, now int64, sum *exportSummary, size, before *int64, prog *progress) error {
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	for _, f := range sc.found {
		if fi, err := os.Stat(f.Path); err == nil {
			prog.total += fi.Size()
		}
	}
	return mergeGroups(c, groupTables(sc, c.Bool("recursive")), "exported", func(g tableGroup) error {
		t, err := openTable(c, g, sf)
		if err != nil {
			return sum.failed(g, err)
		}
		defer closeTable(t)
		o, err := mergeOptions(c, t, sf)
		if err != nil {
			return err
		}
		o.Now = now
		first := t.SSTables()[0]
		names := inspect.DefaultNames(first)
		if sf != nil {
			if names, err = sf.Apply(first); err != nil {
				return sum.failed(g, err)
			}
		}
		n := exportNames(sf, first, names)
		*size = 0
		for _, s := range t.SSTables() {
			if fi, err := os.Stat(s.Path(format.ComponentData)); err == nil {
				*size += fi.Size()
			}
		}
		defer func() { *before += *size }()
		from := g.dir
		if from == "" {
			from = filepath.Dir(t.Name(0))
		}
		files, err := ex.Source(&mergedSource{t: t, o: o, name: mergedName(t)}, n, from)
		if err != nil {
			return sum.failed(g, err)
		}
		for _, s := range t.SSTables() {
			f, err := ex.Metadata(s, n)
			if err != nil {
				return sum.failed(g, err)
			}
			files = append(files, f...)
		}
		sum.Tables++
		sum.SSTables += len(t.SSTables())
		sum.add(c, files)
		return nil
	})
}

// failed lists a table that could not be exported in the summary, and
// returns err for mergeEach to name on stderr.
func (s *exportSummary) failed(g tableGroup, err error) error {
	name := g.dir
	if name == "" && len(g.found) > 0 {
		name = filepath.Dir(g.found[0].Path)
	}
	s.Errors = append(s.Errors, sstableError{SSTable: name, Error: err.Error()})
	return err
}

// add counts files in the summary and, without --json, prints them.
func (s *exportSummary) add(c *cli.Context, files []export.File) {
	for _, f := range files {
		s.Files = append(s.Files, f)
		s.Rows += f.Rows
		s.Bytes += f.Bytes
		if !c.Bool("json") {
			rel, err := filepath.Rel(c.String("out"), f.Path)
			if err != nil {
				rel = f.Path
			}
			fmt.Fprintf(stdout, "%-10s %10d rows %12d bytes  %s\n", f.Dataset, f.Rows, f.Bytes, rel)
		}
	}
}
