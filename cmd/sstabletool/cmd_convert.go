package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/reader"
)

// convertCommand is the convert command.
func convertCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "convert",
		Usage:     "rewrite sstables in another version (nc/nb -> oa, big <-> da, and back), crash-safely",
		ArgsUsage: "SRC... --to VERSION --out DIR",
		Description: "Rewrites every component of each source sstable into DIR in version --to: partition headers,\n" +
			"Index.db entries and promoted index blocks are re-encoded and every position behind them moves;\n" +
			"row bodies are copied byte for byte. To or from da (Cassandra 5.0's trie-indexed format), Index.db and\n" +
			"Summary.db become Partitions.db and Rows.db or back, with index blocks cut anew from the rows at\n" +
			"--column-index-size (Cassandra's default for the target format). Sources are only read. Files are written into a hidden staging\n" +
			"directory inside DIR (so DIR may be a mount point), fsynced, and renamed into place only when complete\n" +
			"(and, with --verify, re-read and compared with the source cell by cell), Data.db last. A DIR that\n" +
			"already holds the sstable is refused; sstables of several tables (-r over a keyspace or a data directory)\n" +
			"go into DIR/<keyspace>/<table directory>/, since their ids collide. Leftovers of a killed convert in DIR are repaired first and\n" +
			"named: an unfinished staging directory is removed, a commit that was under way is completed.\n" +
			"To rewrite a stopped node's data directory in place, use sstabletool upgrade.\n\n" +
			"--merge is an offline major compaction: each table's sstables (a table directory, or its files; with -r\n" +
			"every table, into DIR/<keyspace>/<table directory>/) are merged as Cassandra's read path and compaction\n" +
			"reconcile them, as of --now (--purge drops what gc_grace lets compaction purge), and written as one\n" +
			"sstable of version --to, one generation past the inputs', with the same staging, fsync and verification\n" +
			"(against a second merge of the inputs). savings --compaction says exactly what it would write.\n\n" +
			"Exit codes: 0 converted, 1 verification failed (output discarded), 2 bad input or usage.\n\n" +
			"Examples:\n" +
			"  sstabletool convert nc-1-big-Data.db --to oa --out /tmp/orders-oa\n" +
			"  sstabletool convert -r /var/lib/cassandra/data/shop --to oa --dry-run                # what would be written, nothing is\n" +
			"  sstabletool convert /tmp/orders-oa --to nc --out /tmp/orders-nc --compression none   # and back, uncompressed\n" +
			"  sstabletool convert /tmp/orders-oa --to da --out /tmp/orders-da                     # trie-indexed (BTI)\n" +
			"  sstabletool convert --merge --to oa --out /tmp/orders-compacted /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool convert --merge -r --purge --to oa --out /tmp/node-compacted /var/lib/cassandra/data   # every table, purging",
		Flags: []cli.Flag{
			versionFlag(&cli.StringFlag{Name: "to", Usage: "target version: oa, nc or nb (any big-format version ma..oa), or da (BTI)"}),
			&cli.StringFlag{Name: "out", Usage: "output data `DIR` (created if missing)"},
			compressionFlag(&cli.StringFlag{Name: "compression", Usage: "Data.db compression: keep (default), none, or a compressor (LZ4Compressor, SnappyCompressor, DeflateCompressor, ZstdCompressor)", Value: "keep"}, "keep"),
			&cli.IntFlag{Name: "chunk-length", Usage: "chunk length in KiB with --compression (default: the source's, else 16)"},
			&cli.IntFlag{Name: "column-index-size", Usage: "index block size in KiB (column_index_size) for blocks cut anew: always with da on either side (default 16 for da, 64 for big), on request between big versions (default: keep the source's blocks)"},
			&cli.BoolFlag{Name: "cap-deletion-times", Usage: "cap deletion times a legacy layout cannot hold (past 2038) instead of failing; the report counts them"},
			&cli.BoolFlag{Name: "verify", Value: true, Usage: "re-read the output and compare it with the source before moving it into place (--verify=false to skip)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "write nothing; print what would be written"},
			dropIndexComponentsFlag,
			&cli.BoolFlag{Name: "merge", Usage: "merge each table's sstables into one (an offline major compaction): the table as Cassandra's read path and compaction reconcile it, as of --now"},
			nowFlag, purgeFlag, gcGraceFlag, schemaFlag, tableFlag,
			rewriteAccessFlag, jsonFlag, recursiveFlag, snapshotsFlag, backupsFlag,
		},
		Action: convertAction,
	}, sstableArgs.withRequired("to"))
}

func parseCompression(c *cli.Context) (*writer.Compression, bool, error) {
	name := c.String("compression")
	class, err := compressorClass(name)
	switch {
	case err != nil:
		return nil, false, usageError("--compression %s: %v", name, err)
	case class == "":
		if c.IsSet("chunk-length") {
			return nil, false, usageError("--chunk-length needs --compression")
		}
		return nil, false, nil
	case class == "none":
		return nil, true, nil
	}
	kib := c.Int("chunk-length")
	if kib == 0 {
		kib = 16
	}
	if kib <= 0 || kib&(kib-1) != 0 || kib > 1<<20 {
		return nil, false, usageError("--chunk-length %d: expected a power of two (KiB)", kib)
	}
	return &writer.Compression{Class: class, Options: map[string]string{}, ChunkLength: kib << 10, MaxCompressedLength: math.MaxInt32}, false, nil
}

// compressorClass is the compression a --compression value names: "" to
// keep the source's ("keep", or no value), "none" for uncompressed, else a
// compressor's class (its simple name).
func compressorClass(name string) (string, error) {
	switch strings.ToLower(name) {
	case "", "keep":
		return "", nil
	case "none", "uncompressed":
		return "none", nil
	}
	class := name
	if i := strings.LastIndex(class, "."); i >= 0 {
		class = class[i+1:]
	}
	_, err := reader.CompressorFor(class, nil)
	return class, err
}

// parseAnyVersion parses a version of either format: da is BTI
// (trie-indexed, Cassandra 5.0), ma..oa big.
func parseAnyVersion(name string) (format.Version, error) {
	if len(name) == 2 && name < "ma" {
		return format.ParseFormatVersion(format.BTI, name)
	}
	return format.ParseVersion(name)
}

func convertOptions(c *cli.Context) (convert.Options, error) {
	to, err := parseAnyVersion(c.String("to"))
	if err != nil {
		return convert.Options{}, usageError("--to: %v", err)
	}
	comp, none, err := parseCompression(c)
	if err != nil {
		return convert.Options{}, err
	}
	a, err := rewriteAccess(c)
	if err != nil {
		return convert.Options{}, err
	}
	kib := c.Int("column-index-size")
	if c.IsSet("column-index-size") && (kib <= 0 || kib > 1<<21) {
		return convert.Options{}, usageError("--column-index-size %d: expected KiB between 1 and %d", kib, 1<<21)
	}
	return convert.Options{To: to, Compression: comp, Uncompressed: none, CapDeletionTimes: c.Bool("cap-deletion-times"),
		Verify: c.Bool("verify"), Access: a, ColumnIndexSize: kib << 10, DropIndexComponents: c.Bool("drop-index-components")}, nil
}

// convertOutDir is where convert writes the sstable p: --out, or for an
// sstable of a secondary index's own table (<table dir>/.<index>/) the
// same .<index>/ inside --out, where Cassandra looks for that table's
// sstables beside the table's (Directories.java): so that convert -r of a
// table directory writes both as Cassandra lays them out, and an index
// table's sstable never takes the name of the table's. With tree (the
// sstables converted lie in several tables' directories: convert -r of a
// keyspace or a data directory) each table's go into
// --out/<keyspace>/<table directory>/, as convert --merge -r lays them
// out, since the tables' sstable ids collide.
func convertOutDir(out, p string, tree bool) string {
	dir := filepath.Dir(p)
	index, table, isIndex := format.IndexTableOf(dir)
	if !isIndex {
		table = dir
	}
	if tree {
		out = filepath.Join(out, filepath.Base(filepath.Dir(table)), filepath.Base(table))
	}
	if isIndex {
		return filepath.Join(out, "."+index)
	}
	return out
}

// severalTables says whether the sstables found lie in more than one
// table's directory (a secondary index table's counts as its table's).
func severalTables(found []format.Found) bool {
	tables := map[string]bool{}
	for _, f := range found {
		dir := filepath.Dir(f.Path)
		if _, table, ok := format.IndexTableOf(dir); ok {
			dir = table
		}
		tables[filepath.Clean(dir)] = true
	}
	return len(tables) > 1
}

// dropIndexComponentsFlag is --drop-index-components for the rewrites
// that write into a directory of the user's: the SAI and SASI files
// there under the output's name, left by an sstable that is gone, are
// removed first rather than refused (Cassandra would read them as the
// index of the sstable written).
var dropIndexComponentsFlag = &cli.BoolFlag{Name: "drop-index-components",
	Usage: "remove SAI and SASI files the output directory holds under an output's name without its Data.db (left by an sstable that is gone; Cassandra would read them as the new sstable's index) instead of refusing"}

// printIndexNotes says, before anything is written, what the rewrite of
// the sstables found does to each index of their tables (convert.IndexNote);
// skipTables leaves out the secondary index tables not among them (a
// caller that rewrites them on their own).
func printIndexNotes(found []format.Found, what string, inPlace, skipTables bool) error {
	var paths []string
	for _, f := range found {
		if f.Err == nil {
			paths = append(paths, f.Path)
		}
	}
	notes, err := convert.IndexNotes(paths)
	if err != nil {
		return err
	}
	for _, n := range notes {
		if skipTables && n.Rewritten == 0 {
			continue
		}
		fmt.Fprintln(stdout, n.Text(what, inPlace))
	}
	return nil
}

func convertAction(c *cli.Context) error {
	o, err := convertOptions(c)
	if err != nil {
		return err
	}
	if c.String("out") == "" && !c.Bool("dry-run") {
		return usageError("convert: --out DIR is required")
	}
	if c.Bool("merge") {
		return convertMerged(c, o)
	}
	for _, f := range []string{"now", "purge", "gc-grace", "schema", "table"} {
		if c.IsSet(f) {
			return usageError("convert: --%s works with --merge", f)
		}
	}
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	sc.verb = "converted"
	if !c.Bool("json") {
		what := "the conversion"
		if c.Bool("dry-run") {
			what = "a conversion"
		}
		if err := printIndexNotes(sc.found, what, false, false); err != nil {
			return err
		}
	}
	rw := &rewrites{json: c.Bool("json")}
	tree := severalTables(sc.found)
	err = sc.each(func(p string) error {
		res, err := withProgress("convert "+p, func(progress func(done, total int64)) (*convert.Result, error) {
			o.Progress = progress
			if c.Bool("dry-run") {
				return convert.Estimate(p, o)
			}
			return convert.Convert(p, convertOutDir(c.String("out"), p, tree), o)
		})
		if ok, err := rw.converted(res, err); !ok {
			return err
		}
		if c.Bool("dry-run") {
			d, _, _ := format.ParseDescriptor(p)
			out := d.WithVersion(o.To).WithDir(convertOutDir(c.String("out"), p, tree))
			if out.Dir == "" {
				out.Dir = "<out>"
			}
			fmt.Fprintf(stdout, "would write %s (%s -> %s, %d partitions):\n", out.Path(format.ComponentData), res.From, res.To, res.Partitions)
			for _, comp := range res.Components {
				fmt.Fprintf(stdout, "  %-20s %10d bytes (source %d)\n", out.Prefix()+comp.Name, comp.After, comp.Before)
			}
			for _, comp := range res.Dropped {
				fmt.Fprintf(stdout, "  %-20s    dropped (source %d bytes; %s has no such component)\n", out.Prefix()+comp.Name, comp.Before, res.To)
			}
			return nil
		}
		verified := ""
		if res.Verified {
			verified = ", verified"
		}
		fmt.Fprintf(stdout, "%s -> %s (%s -> %s, %d partitions%s)\n", res.Source, res.Output, res.From, res.To, res.Partitions, verified)
		if res.Counts.Capped > 0 {
			fmt.Fprintf(stdout, "  capped %d deletion time(s) to fit %s\n", res.Counts.Capped, res.To)
		}
		for _, m := range res.StatisticsRecollected {
			fmt.Fprintf(stdout, "  statistics: %s; written as the rows' own\n", m)
		}
		for _, l := range res.Losses {
			fmt.Fprintf(stdout, "  note: %s\n", l)
		}
		return nil
	}, rw.failed)
	if err != nil {
		return err
	}
	return rw.end(sc.err(), fmt.Sprintf("%d of %d sstable(s) failed verification; their output was discarded", rw.problems, sc.total()))
}

// rewriteAccessFlag is --access for convert and savings: they read every
// byte once, in order, where a mapping gains nothing and would count the
// whole source in the resident set, so they read buffered unless told
// otherwise, and their help says so.
var rewriteAccessFlag = oneOf(&cli.StringFlag{Name: "access", Value: "buffered",
	Usage: "how to read components: buffered (read calls; every byte is read once, in order) or mmap (memory-mapped)"},
	names(reader.AccessModes())...).parsedBy(parseAccess)

func rewriteAccess(c *cli.Context) (reader.Access, error) {
	a, err := reader.ParseAccess(c.String("access"))
	if err != nil {
		return 0, usageError("--access: %v", err)
	}
	return a, nil
}
