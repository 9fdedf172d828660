package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/export"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/reader"
)

// exportCommand is the export command.
func exportCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "export",
		Usage:     "write sstables as Parquet datasets (partitions, cells, sstables) for DuckDB, Spark or Trino",
		ArgsUsage: "--out DIR PATH...",
		Description: "Writes three Hive-partitioned datasets under DIR, one file per sstable in each:\n" +
			"  partitions/keyspace=K/table=T/part-<node>-<sstable>.parquet   a row per partition: key, token, size, rows,\n" +
			"                                                                cells, tombstones by kind (as partitions --json)\n" +
			"  cells/keyspace=K/table=T/part-<node>-<sstable>.parquet        a row per cell, row liveness, deletion and range\n" +
			"                                                                tombstone bound (what dump prints), typed\n" +
			"  sstables/keyspace=K/table=T/part-<node>-<sstable>.parquet     a row per sstable: metadata --json's facts and\n" +
			"                                                                the bytes converting it to oa would save\n" +
			"Keyspace and table come from the <keyspace>/<table>-<id>/ directory (or --schema); the names of the\n" +
			"key and clustering columns, when the node's system_schema or --schema gives them, are in each file's\n" +
			"metadata (sstabletool.key_columns, sstabletool.clustering_columns). The node is --node (default:\n" +
			"the host name). Run it on each node, copy every node's DIR into one place (object store, HDFS, a\n" +
			"shared disk: the file names never collide), and one query reads the fleet. Files are written under\n" +
			"hidden names and renamed into place once complete, so a killed export leaves nothing an engine would\n" +
			"read; a damaged sstable is named on stderr and skipped, the rest are exported, exit 2.\n" +
			"Parquet with Snappy, row groups of at most 32 MiB: memory stays bounded whatever the table's size.\n" +
			"docs/export.md lists every column.\n\n" +
			"--merge exports each table's merged view instead (its sstables reconciled as a major compaction\n" +
			"would write them, as dump --merge prints them; with -r each table directory on its own): one file\n" +
			"per table, part-<node>-merged.parquet, in partitions/ and cells/, each cell's sstable column naming\n" +
			"the sstable it came from; sstables/ still holds a row per sstable merged. --now, --purge and\n" +
			"--gc-grace are dump --merge's. Export merged views into a DIR of their own: a query over both kinds\n" +
			"of file would count every cell twice.\n\n" +
			"Examples:\n" +
			"  sstabletool export --out /tmp/export -r /var/lib/cassandra/data              # every table of this node\n" +
			"  sstabletool export --out /tmp/export --node n1 --datasets partitions,sstables -r /var/lib/cassandra/data/shop\n" +
			"  sstabletool export --out /tmp/one --json nc-1-big-Data.db                     # files, rows and bytes as JSON\n" +
			"  sstabletool export --out /tmp/named --schema shop.cql nc-1-big-Data.db        # keyspace and table from DESCRIBE output\n" +
			"  sstabletool export --out /tmp/merged --merge -r /var/lib/cassandra/data       # each table as a major compaction would leave it\n" +
			"  sstabletool export --out /tmp/merged --merge --purge --now 2024-05-01T00:00:00Z -r /var/lib/cassandra/data/shop\n" +
			"  # The fleet: one export per node, the directories copied into one place, one query.\n" +
			"  for n in node1 node2 node3; do ssh $n sstabletool export --out /tmp/export -r /var/lib/cassandra/data; done\n" +
			"  for n in node1 node2 node3; do rsync -a $n:/tmp/export/ fleet/; done\n" +
			"  duckdb -c \"SELECT keyspace, \\\"table\\\", node, key, size FROM read_parquet('fleet/partitions/**/*.parquet',\n" +
			"      hive_partitioning = true) ORDER BY size DESC LIMIT 20\"",
		Flags: []cli.Flag{
			oneOf(&cli.StringFlag{Name: "format", Value: "parquet", Usage: "output format: parquet (the only one)"}, "parquet"),
			&cli.StringFlag{Name: "out", Usage: "output `DIR` (created if needed; files already there of the same sstables are replaced)"},
			&cli.StringFlag{Name: "node", Usage: "the node `NAME` in every row and file name (default: the host name)"},
			listOf(&cli.StringFlag{Name: "datasets", Value: "partitions,cells,sstables", Usage: "which datasets to write, comma-separated: partitions, cells, sstables (the cells dataset is by far the largest)"},
				export.All.Names()...).parsedBy(func(s string) error { _, err := export.ParseDatasets(s); return err }),
			&cli.Int64Flag{Name: "current-timestamp", Aliases: []string{"u"}, Usage: "`SECONDS` since the epoch at which TTLs count as expired, as partitions -u (default: now; with --merge, --now says it too)"},
			&cli.BoolFlag{Name: "merge", Aliases: []string{"m"}, Usage: "export each table's merged view, one file per table (see above)"},
			nowFlag, purgeFlag, gcGraceFlag,
			rewriteAccessFlag, jsonFlag, recursiveFlag, snapshotsFlag, backupsFlag, schemaFlag, tableFlag,
		},
		Action: exportAction,
	}, sstableArgs.withRequired("out"))
}

// exportMemoryLimit is the export's soft memory limit (GOMEMLIMIT).
const exportMemoryLimit = 384 << 20

// exportSummary is what --json prints.
type exportSummary struct {
	Out      string         `json:"out"`
	Node     string         `json:"node"`
	Merged   bool           `json:"merged,omitempty"`
	Tables   int            `json:"tables,omitempty"` // with --merge: the tables merged
	SSTables int            `json:"sstables"`
	Files    []export.File  `json:"files"`
	Rows     int64          `json:"rows"`
	Bytes    int64          `json:"bytes"`
	Errors   []sstableError `json:"errors,omitempty"`
}

func exportAction(c *cli.Context) error {
	ds, err := export.ParseDatasets(c.String("datasets"))
	if err != nil {
		return usageError("export: --datasets: %v", err)
	}
	now := time.Now().Unix()
	if c.IsSet("current-timestamp") {
		if now = c.Int64("current-timestamp"); now <= 0 {
			return usageError("export: -u/--current-timestamp %d: expected seconds since the epoch", now)
		}
	}
	if !c.Bool("merge") {
		for _, f := range []string{"now", "purge", "gc-grace"} {
			if c.IsSet(f) {
				return usageError("export: --%s works with --merge (see sstabletool export --help)", f)
			}
		}
	} else if c.IsSet("now") {
		// One time for the merge (what has expired, what is purged) and
		// the counts of expired TTLs.
		t, err := parseNow(c)
		if err != nil {
			return err
		}
		if c.IsSet("current-timestamp") && t != now {
			return usageError("export: -u %d and --now %s are two times: give one (with --merge they are the same)", now, c.String("now"))
		}
		now = t
	}
	node := c.String("node")
	if node == "" {
		if node, err = os.Hostname(); err != nil || node == "" {
			return usageError("export: the host name is unknown (%v): give --node NAME", err)
		}
	}
	a, err := rewriteAccess(c)
	if err != nil {
		return err
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The export holds two batches and one row group per file (about
		// 150 MB at most); a soft limit keeps the collector from letting
		// the heap grow to twice that, so that peak RSS stays under 512 MiB
		// whatever the table's size. Set only for the command's run.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(exportMemoryLimit))
	}
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	var total, before int64
	var size int64
	prog := newProgress("export", 0)
	o := export.Options{Node: node, Datasets: ds, Now: now, Savings: oaSavings(a),
		Progress: func(done, tot int64) {
			if tot > 0 {
				prog.update(before + size*done/tot)
			}
		}}
	ex, err := export.New(c.String("out"), o)
	if err != nil {
		return usageError("export: %v", err)
	}
	sum := exportSummary{Out: c.String("out"), Node: node, Files: []export.File{}}
	if c.Bool("merge") {
		sum.Merged = true
		err := exportMerged(c, ex, sf, now, &sum, &size, &before, prog)
		prog.done()
		if sum.Tables == 0 && len(sum.Errors) == 0 {
			return err // bad usage, or nothing found: no summary
		}
		if c.Bool("json") {
			if jerr := writeJSON(sum); jerr != nil {
				return jerr
			}
		} else {
			tables := "tables"
			if sum.Tables == 1 {
				tables = "table"
			}
			fmt.Fprintf(stdout, "exported %d %s merged from %d sstables: %d files, %d rows, %d bytes under %s\n",
				sum.Tables, tables, sum.SSTables, len(sum.Files), sum.Rows, sum.Bytes, sum.Out)
		}
		return err
	}
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	for _, f := range sc.found {
		if fi, err := os.Stat(f.Path); err == nil {
			total += fi.Size()
		}
	}
	prog.total = total
	err = sc.each(func(p string) error {
		size = 0
		if fi, err := os.Stat(p); err == nil {
			size = fi.Size()
		}
		defer func() { before += size }()
		s, err := sstable.Open(p, sstable.Options{Access: a})
		if err != nil {
			return err
		}
		defer s.Close()
		names := inspect.DefaultNames(s)
		if sf != nil {
			if names, err = sf.Apply(s); err != nil {
				return err
			}
		}
		files, err := ex.SSTable(s, exportNames(sf, s, names))
		if err != nil {
			return err
		}
		sum.SSTables++
		sum.add(c, files)
		return nil
	}, func(e sstableError) { sum.Errors = append(sum.Errors, e) })
	prog.done()
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if err := writeJSON(sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "exported %d of %d sstables: %d files, %d rows, %d bytes under %s\n",
			sum.SSTables, sc.total(), len(sum.Files), sum.Rows, sum.Bytes, sum.Out)
	}
	sc.verb = "exported"
	return sc.err()
}

// oaSavings is the sstables dataset's savings: what `savings` reports for
// a conversion to oa (convert.Estimate: every component produced in memory,
// Data.db recompressed), and nothing to save for sstables whose deletion
// times are compact already (oa, da), as `savings` says of them.
func oaSavings(a reader.Access) func(s *sstable.SSTable) (int64, error) {
	return func(s *sstable.SSTable) (int64, error) {
		if s.Version().HasUIntDeletionTime {
			return 0, nil
		}
		res, err := convert.Estimate(s.Path(format.ComponentData), convert.Options{To: oa.Version, Access: a})
		if err != nil {
			return 0, err
		}
		before, after := res.Totals()
		return before - after, nil
	}
}

// exportNames are the export's names for sstable s: its keyspace and
// table, with the key and clustering column names when a schema gives
// them (a header's placeholders are not written as names).
func exportNames(sf *inspect.SchemaSource, s *sstable.SSTable, names inspect.Names) export.Names {
	n := export.Names{Keyspace: names.Keyspace, Table: names.Table}
	if sf != nil && sf.Resolves(s) {
		n.PartitionKey, n.Clustering = names.PartitionKey, names.Clustering
	}
	return n
}
