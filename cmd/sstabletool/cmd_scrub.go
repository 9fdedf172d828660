package main

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/scrub"
)

// scrubCommand is the scrub command.
func scrubCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "scrub",
		Usage:     "repair sstables offline (what sstablescrub does, without a JVM): rebuild what is derived, salvage what is damaged, report what is lost",
		ArgsUsage: "--out DIR SSTABLE... | --in-place DATA_DIR...",
		Description: "Rebuilds Index.db, Summary.db, Filter.db, Digest.crc32, CRC.db, TOC.txt (and for da Partitions.db and\n" +
			"Rows.db) from Data.db and Statistics.db where they are missing or damaged, byte for byte as Cassandra\n" +
			"wrote them (give --column-index-size as the table had it: Cassandra's default 64 KiB (16 for da),\n" +
			"4 for Cassandra's own test fixtures). A whole Data.db is kept byte for byte.\n\n" +
			"A damaged Data.db (a chunk that fails its CRC or does not decompress, a partition or row that does not\n" +
			"decode) is rewritten: every partition that reads whole is kept; one that does not is left out and the\n" +
			"scrub resynchronizes at the next partition the index knows, as Cassandra's scrubber does. Duplicate rows\n" +
			"are merged, rows and partitions out of order are written in order to a second sstable (as Cassandra's\n" +
			"scrub does). The report names every partition lost (by its key from Data.db, else Index.db, else\n" +
			"Partitions.db's key prefix), the byte ranges skipped and the rows dropped or merged; --json has\n" +
			"partitions_kept, partitions_lost and the lost list.\n\n" +
			"Rows whose TTL overflowed past 2038 in a 3.x/4.x sstable (CASSANDRA-14092) are left out and reported, as\n" +
			"Cassandra leaves them out; -r (--reinsert-overflowed-ttl, sstablescrub's option) keeps them, expiring at\n" +
			"2038-01-19T03:14:06Z with their timestamp + 1 microsecond, as Cassandra 5.0 rewrites them.\n\n" +
			"--out DIR writes the repaired copy into DIR (staged, then moved into place with Data.db last; the source\n" +
			"is only read). --in-place scrubs a stopped node's sstables in their own directories through Cassandra's\n" +
			"transaction log, as sstabletool upgrade does (same refusal on a live node, same crash safety, snapshots/\n" +
			"and backups/ left alone), after hard-linking each sstable it replaces into snapshots/pre-scrub-<ms>/ as\n" +
			"sstablescrub does; an sstable that needs nothing is left alone. Every sstable written passes verify first.\n\n" +
			"Modes: skip (the default) as above; abort writes nothing when anything would be lost, dropped, merged or\n" +
			"reordered; validate reports what skip would do and writes nothing. --to writes another version\n" +
			"(scrub --to oa also upgrades).\n\n" +
			"Exit codes: 0 nothing needed repair, 1 something was repaired or lost (see the report), 2 an sstable\n" +
			"could not be scrubbed at all (or bad usage).\n\n" +
			"Examples:\n" +
			"  sstabletool scrub --out /tmp/fixed /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool scrub --mode validate --recursive /var/lib/cassandra/data/shop   # what would be lost; writes nothing\n" +
			"  sstabletool scrub -r --out /tmp/fixed-ttl nc-1-big-Data.db                   # keep overflowed TTLs (CASSANDRA-14092)\n" +
			"  sstabletool scrub --column-index-size 4 --out /tmp/rebuilt nc-1-big-Data.db  # rebuild a lost Index.db as it was\n" +
			"  sstabletool scrub --to oa --out /tmp/oa nc-1-big-Data.db                     # repair and upgrade in one pass\n" +
			"  sstabletool scrub --in-place /var/lib/cassandra/data/shop --json             # a stopped node, through its transaction log",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output `DIR` for the repaired copies (created if missing)"},
			&cli.BoolFlag{Name: "in-place", Usage: "scrub a stopped node's sstables in their own directories (DATA_DIR, a keyspace's or a table's)"},
			oneOf(&cli.StringFlag{Name: "mode", Value: "skip", Usage: "skip (leave out what cannot be read), abort (write nothing if anything would be lost) or validate (report only)"},
				names(scrub.Modes())...).parsedBy(func(s string) error { _, err := scrub.ParseMode(s); return err }),
			&cli.BoolFlag{Name: "reinsert-overflowed-ttl", Aliases: []string{"r"}, Usage: "keep rows whose expiration overflowed past 2038 (CASSANDRA-14092), expiring at 2038-01-19T03:14:06Z with timestamp + 1 µs (sstablescrub -r)"},
			versionFlag(&cli.StringFlag{Name: "to", Usage: "output version (default: the source's): oa, nc, nb (any of ma..oa) or da"}),
			&cli.IntFlag{Name: "column-index-size", Usage: "index block size in KiB (column_index_size) for the index blocks rebuilt (default 64 for big format, 16 for da)"},
			schemaFlag, tableFlag,
			&cli.BoolFlag{Name: "force", Usage: "with --in-place: skip the checks that the node is stopped"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), DefaultText: "the number of cores", Usage: "with --in-place: sstables scrubbed at once"},
			&cli.StringSliceFlag{Name: "commitlog", Usage: "with --in-place: the node's commit log `DIR` (default: commitlog/ beside the data directory)"},
			dropIndexComponentsFlag,
			&cli.BoolFlag{Name: "recursive", Usage: "with --out: descend into subdirectories of directory arguments (skipping snapshots/, backups/ and staging directories)"},
			snapshotsFlag, backupsFlag, rewriteAccessFlag, jsonFlag,
		},
		Action: scrubAction,
	}, sstableArgs)
}

func scrubOptions(c *cli.Context) (scrub.Options, error) {
	var o scrub.Options
	m, err := scrub.ParseMode(c.String("mode"))
	if err != nil {
		return o, usageError("--mode: %v", err)
	}
	o.Mode = m
	o.ReinsertOverflowedTTL = c.Bool("reinsert-overflowed-ttl")
	if c.String("to") != "" {
		if o.To, err = parseAnyVersion(c.String("to")); err != nil {
			return o, usageError("--to: %v", err)
		}
	}
	kib := c.Int("column-index-size")
	if c.IsSet("column-index-size") && (kib <= 0 || kib > 1<<21) {
		return o, usageError("--column-index-size %d: expected KiB between 1 and %d", kib, 1<<21)
	}
	o.ColumnIndexSize = kib << 10
	o.DropIndexComponents = c.Bool("drop-index-components")
	if o.Access, err = rewriteAccess(c); err != nil {
		return o, err
	}
	sf, err := loadSchema(c)
	if err != nil {
		return o, err
	}
	if sf != nil {
		o.CheckSchema = func(s *sstable.SSTable) error { _, err := sf.Apply(s); return err }
	}
	return o, nil
}

func scrubAction(c *cli.Context) error {
	o, err := scrubOptions(c)
	if err != nil {
		return err
	}
	inPlace := c.Bool("in-place")
	switch {
	case inPlace && c.String("out") != "":
		return usageError("scrub: --out and --in-place exclude each other")
	case !inPlace && c.String("out") == "" && o.Mode != scrub.Validate:
		return usageError("scrub: give --out DIR (a repaired copy) or --in-place (a stopped node's sstables), or --mode validate")
	case !inPlace && (c.IsSet("force") || c.IsSet("commitlog") || c.IsSet("jobs")):
		return usageError("scrub: --force, --commitlog and --jobs go with --in-place")
	case inPlace && c.Bool("drop-index-components"):
		return usageError("scrub: --drop-index-components goes with --out: --in-place writes each sstable under a new id, where no index file can be")
	case inPlace && c.Bool("recursive"):
		return usageError("scrub: --in-place scrubs every table directory under its arguments already; --recursive is for --out")
	}
	if inPlace {
		return scrubInPlace(c, o)
	}
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	sc.verb = "scrubbed"
	if !c.Bool("json") && o.Mode != scrub.Validate {
		if err := printIndexNotes(sc.found, "the scrub", false, false); err != nil {
			return err
		}
	}
	rw := &rewrites{json: c.Bool("json")}
	tree := severalTables(sc.found)
	err = sc.each(func(p string) error {
		rep, err := withProgress("scrub "+p, func(progress func(done, total int64)) (*scrub.Report, error) {
			o.Progress = progress
			return scrub.Scrub(p, convertOutDir(c.String("out"), p, tree), o)
		})
		if rep == nil {
			return err
		}
		rw.results = append(rw.results, rep)
		if rep.Repaired() {
			rw.problems++
		}
		if !rw.json {
			printScrubReport(rep, err)
		}
		if errors.Is(err, scrub.ErrAborted) {
			return nil
		}
		return err
	}, rw.failed)
	if err != nil {
		return err
	}
	return rw.end(sc.err(), "")
}

// printScrubReport prints one sstable's report.
func printScrubReport(r *scrub.Report, err error) {
	hideBar()
	for _, n := range r.Recovered {
		fmt.Fprintf(stdout, "recovered: %s\n", n)
	}
	var dest string
	switch {
	case errors.Is(err, scrub.ErrAborted):
		dest = " (aborted: nothing written)"
	case err != nil:
		dest = " (failed: nothing written)"
	case r.Mode == "validate":
		dest = " (validate: nothing written)"
	case r.Unchanged:
		dest = " (left as it is)"
	case len(r.Outputs) == 0:
		dest = " -> nothing left to write"
	default:
		dest = " -> " + strings.Join(r.Outputs, ", ")
	}
	verified := ""
	if r.Verified {
		verified = ", verified"
	}
	how := "Data.db kept"
	if r.Rewritten {
		how = "Data.db rewritten"
	}
	fmt.Fprintf(stdout, "%s%s (%s -> %s, %s%s)\n", r.SSTable, dest, r.From, r.To, how, verified)
	for _, c := range r.Components {
		if c.How == "rebuilt" {
			fmt.Fprintf(stdout, "  rebuilt %s: %s\n", c.Name, c.Why)
		}
	}
	for _, l := range r.Lost {
		from := ""
		if l.KeyFrom != "" && l.KeyFrom != format.ComponentData {
			from = " (key from " + l.KeyFrom + ")"
		}
		fmt.Fprintf(stdout, "  lost partition %s%s at byte %d: %s\n", l.Key, from, l.Position, l.Reason)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(stdout, "  skipped Data.db bytes %d..%d\n", s.Start, s.End)
	}
	for _, rc := range r.Rows {
		row := "the row"
		if rc.Clustering != "" {
			row = "row " + rc.Clustering
		}
		fmt.Fprintf(stdout, "  %s %s of partition %s: %s\n", rc.Action, row, rc.Key, rc.Reason)
	}
	for _, ooo := range r.OutOfOrder {
		what := "partition"
		if ooo.Rows {
			what = "rows of partition"
		}
		fmt.Fprintf(stdout, "  out of order: %s %s at byte %d: %s\n", what, ooo.Key, ooo.Position, ooo.Reason)
	}
	if r.More > 0 {
		fmt.Fprintf(stdout, "  ... and %d more not listed\n", r.More)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(stdout, "  note: %s\n", n)
	}
	verdict := r.Summary()
	if !r.Repaired() {
		verdict += "; nothing needed repair"
	}
	fmt.Fprintf(stdout, "  %s\n", verdict)
}

func scrubInPlace(c *cli.Context, o scrub.Options) error {
	if c.Int("jobs") < 1 {
		return usageError("--jobs %d: give at least 1", c.Int("jobs"))
	}
	js := c.Bool("json")
	io := scrub.InPlaceOptions{Options: o, Force: c.Bool("force"), Jobs: c.Int("jobs"), CommitLogs: c.StringSlice("commitlog")}
	if !js {
		io.Log = func(line string) { hideBar(); fmt.Fprintln(stdout, line) }
	}
	prog := newProgress("scrub", 0)
	io.Progress = func(done, total int64) { prog.total = total; prog.update(done) }
	rep, runErr := scrub.InPlace(c.Args().Slice(), io)
	prog.done()
	if rep == nil {
		return usageError("%v", runErr)
	}
	if js {
		if err := writeJSON(rep); err != nil {
			return err
		}
	} else {
		for _, r := range rep.Recovered {
			fmt.Fprintf(stdout, "recovered: %s\n", r)
		}
		for _, r := range rep.SSTables {
			printScrubReport(r, nil)
		}
		if rep.Snapshot != "" {
			fmt.Fprintf(stdout, "pre-scrub sstables snapshotted into snapshot %s\n", rep.Snapshot)
		}
		for _, f := range rep.Failed {
			fmt.Fprintf(stderr, "sstabletool: %s: %s\n", f.Path, f.Reason)
		}
	}
	switch {
	case runErr != nil:
		return cli.Exit(runErr.Error(), exitBadData)
	case len(rep.Failed) > 0:
		return cli.Exit(fmt.Sprintf("%s could not be scrubbed", words.Plural(len(rep.Failed), "sstable or path")), exitBadData)
	case len(rep.SSTables) == 0:
		return usageError("no sstables found under %s", strings.Join(c.Args().Slice(), " "))
	case rep.Repaired():
		return cli.Exit("", exitProblem)
	}
	return nil
}
