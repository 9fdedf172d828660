package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/split"
	"github.com/sstabletool/sstabletool/internal/words"
)

// splitCommand is the split command.
func splitCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "split",
		Usage:     "cut sstables into sstables of at most a size, whole partitions each (what sstablesplit does, offline, without a JVM)",
		ArgsUsage: "[-s MB] SSTABLE|DIR... | --data DATA_DIR KEYSPACE TABLE",
		Description: "Splits each sstable whose Data.db is larger than the size (-s, in MB as sstablesplit takes it: 50 by\n" +
			"default; or with a unit: 64KiB, 1GiB) into sstables whose Data.db takes at most that on disk, every one\n" +
			"holding whole partitions in the source's order; a partition larger than the size on its own is alone in\n" +
			"its sstable. Together the outputs hold exactly the source's partitions, row for row and cell for cell:\n" +
			"nothing is merged or purged (dump --merge of the outputs prints what dump of the source printed). They\n" +
			"keep the source's version, compression and serialization header (--to writes another), Statistics.db is\n" +
			"collected anew for each, and their level is 0, as sstablesplit's. Every output is verified (checksums,\n" +
			"structure, derived components, and its content against the source's) before anything is replaced.\n\n" +
			"By default the sstables are replaced in place, on a stopped node, as sstablesplit does: a snapshot first\n" +
			"(snapshots/pre-split-<ms>/, hard links; --no-snapshot skips it), then one transaction per sstable through\n" +
			"Cassandra's transaction log (<version>_txn_unknowncompactiontype_<uuid>.log, the name sstablesplit's\n" +
			"offline transaction has): an ADD record for each output before any of its files exists, REMOVE and\n" +
			"COMMIT once all are written and verified. After a kill at any moment, the next run or Cassandra's\n" +
			"startup leaves either the source or all of its outputs live, never both and never a part. The node must\n" +
			"be stopped: split refuses while a process holds a file of the table open (naming it), when the commit log\n" +
			"is newer than the sstables, or when a file changes under it (--force skips these checks, as upgrade's).\n" +
			"--out DIR writes the outputs into DIR instead (staged and committed at once; the sources are only read;\n" +
			"DIR must hold no sstable, and no SAI or SASI file whose sstable is gone: --drop-index-components removes\n" +
			"those).\n\n" +
			"SAI and SASI files describe their sstable's Data.db: an sstable split loses them, and Cassandra builds the\n" +
			"index for its outputs. Before anything is written, each index is named with the sstables it covers,\n" +
			"those the split rewrites (the others keep their files) and the nodetool rebuild_index that builds it at\n" +
			"once; after the run, how many sstables were written in their place (docs/indexes.md).\n\n" +
			"Arguments: sstables (any component), or table, keyspace or data directories (every live sstable under\n" +
			"them; snapshots/ and backups/ are left alone); or --data DATA_DIR KEYSPACE TABLE.\n\n" +
			"Exit codes: 0 split (or nothing needed splitting), 2 an sstable could not be split (it is left as it\n" +
			"was), bad usage, or a node that looks live.\n\n" +
			"Examples:\n" +
			"  sstabletool split -s 100 --data /var/lib/cassandra/data shop orders      # every sstable of shop.orders over 100 MB, in place\n" +
			"  sstabletool split -s 4KiB --out /tmp/pieces nc-1-big-Data.db            # copies elsewhere; the source is only read\n" +
			"  sstabletool split --no-snapshot --json /var/lib/cassandra/data/shop      # 50 MB, every table of keyspace shop\n" +
			"  sstabletool split -s 4KiB --to oa --out /tmp/oa-pieces nc-1-big-Data.db  # split and upgrade in one pass",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "size", Aliases: []string{"s"}, Value: "50", Usage: "maximum `SIZE` of each output's Data.db: MB as sstablesplit takes it, or with a unit (KiB, MiB, GiB)"},
			&cli.BoolFlag{Name: "no-snapshot", Usage: "don't snapshot the sstables before splitting them"},
			&cli.BoolFlag{Name: "debug", Usage: "print each transaction's steps as they happen, and the whole of each error"},
			&cli.StringFlag{Name: "out", Usage: "write the outputs into `DIR` (an empty directory, created if missing) instead of replacing the sstables"},
			dropIndexComponentsFlag,
			dataFlag,
			&cli.StringFlag{Name: "to", Usage: "output version (default: each source's): oa, nc, nb (any of ma..oa) or da"},
			&cli.BoolFlag{Name: "force", Usage: "skip the checks that the node is stopped (no process holds a file of the table open; in place also: the commit log is not newer, no file changes under it)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "in place: sstables split at once"},
			&cli.StringSliceFlag{Name: "commitlog", Usage: "in place: the node's commit log `DIR` (default: commitlog/ beside the data directory)"},
			&cli.BoolFlag{Name: "verify", Value: true, Usage: "verify each output (checksums, structure, derived components, content against the source's) before it is committed (--verify=false to skip)"},
			rewriteAccessFlag, jsonFlag,
		},
		Action: splitAction,
	}, argSpec{min: 1, max: -1, what: "sstable or directory (or, with --data, KEYSPACE TABLE)"})
}

// splitSize reads -s: a whole number is MB as sstablesplit takes it
// (sizeInMB * 1024 * 1024), anything else a size with its unit as
// partitions' --min-size reads it (64KiB, 1GiB, 100MB = 10^8 bytes).
func splitSize(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err == nil && n > 0 && n <= (1<<62)/split.MiB {
		return n * split.MiB, nil
	}
	if err != nil {
		if n, err = parseSize(strings.TrimSpace(s)); err == nil && n > 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("invalid target size for SSTables, must be > 0 (got: %s): give MB (50), or a size with its unit (64KiB, 1GiB)", s)
}

// rewriteArgs are the sstables and directories a split or filter takes:
// the arguments, or with --data the directory of KEYSPACE TABLE in it.
// Arguments that do not exist are skipped with sstablesplit's words.
func rewriteArgs(c *cli.Context) ([]string, error) {
	if len(c.StringSlice("data")) > 0 {
		return tableTargets(c)
	}
	args := c.Args().Slice()
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "Skipping inexisting file %s\n", a)
		case !fi.IsDir():
			if _, _, err := format.ParseDescriptor(a); err != nil {
				fmt.Fprintf(stderr, "Skipping non sstable file %s\n", a)
				continue
			}
			out = append(out, a)
		default:
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, usageError("No valid sstables to %s", c.Command.Name)
	}
	return out, nil
}

// rewriteReport is what split and filter print in --json: the in-place
// report (split.NodeReport) for both ways.
type rewriteReport = split.NodeReport

// writeOut runs an out-of-place rewrite of every sstable the paths name
// into dir (prepared once: leftovers repaired, refused if it holds
// sstables).
func writeOut(c *cli.Context, paths []string, dir string, o split.Options) (*rewriteReport, error) {
	if c.IsSet("jobs") || c.IsSet("commitlog") || c.Bool("no-snapshot") {
		return nil, usageError("%s: --jobs, --commitlog and --no-snapshot go with a rewrite in place, not --out", c.Command.Name)
	}
	res := format.Find(paths, format.FindOptions{Recursive: true})
	reportSkipped(res.Skipped)
	rep := &rewriteReport{SSTables: []*split.Result{}, Recovered: []string{}, Skipped: []split.Failure{}, Failed: []split.Failure{}}
	var dirOf string
	for _, f := range res.SSTables {
		if f.Err != nil {
			continue
		}
		if d := filepath.Dir(f.Path); dirOf == "" {
			dirOf = d
		} else if d != dirOf {
			return nil, usageError("%s: with --out, all sstables must be part of the same table (%s and %s are not in one directory)", c.Command.Name, dirOf, d)
		}
	}
	if len(res.SSTables) == 0 {
		return nil, usageError("No valid sstables to %s", c.Command.Name)
	}
	// The sources are only read, but a running node compacts them away
	// and writes new ones beside them: the copy would be of a moment that
	// never was the table's.
	err := refuseLive(c, sstableDirs(res.SSTables))
	if err != nil {
		return nil, err
	}
	var srcs []string
	for _, f := range res.SSTables {
		if f.Err == nil {
			srcs = append(srcs, f.Path)
		}
	}
	recovered, dropped, err := split.PrepareOut(dir, c.Bool("drop-index-components"))
	rep.Recovered = append(rep.Recovered, recovered...)
	if !c.Bool("json") {
		for _, n := range dropped {
			fmt.Fprintf(stdout, "removed %s: an index file left without its Data.db (--drop-index-components)\n", n)
		}
	}
	if err != nil {
		return rep, usageError("%s: %v", c.Command.Name, err)
	}
	// Before anything is written: what becomes of each index (the
	// sstables copied have none of its files).
	writes := map[string]bool{}
	for _, src := range srcs {
		w, err := split.Writes(src, o)
		writes[src] = w || err != nil // one that cannot be read fails below
	}
	if rep.Indexes, err = convert.IndexNotesFor(srcs, func(src string) bool { return writes[src] }); err != nil {
		return nil, badData(err)
	}
	sayIndexNotes(c, rep.Indexes, false)
	var total int64
	for _, f := range res.SSTables {
		if fi, err := os.Stat(f.Path); err == nil {
			total += fi.Size()
		}
	}
	prog := newProgress(c.Command.Name, total)
	defer prog.done()
	var before int64
	for _, f := range res.SSTables {
		if f.Err != nil {
			rep.Failed = append(rep.Failed, split.Failure{Path: f.Path, Reason: f.Err.Error()})
			continue
		}
		size := int64(0)
		if fi, err := os.Stat(f.Path); err == nil {
			size = fi.Size()
		}
		so := o
		so.Progress = func(done, tot int64) {
			if tot > 0 {
				prog.update(before + size*done/tot)
			}
		}
		r, err := split.Write(f.Path, dir, so)
		before += size
		if err != nil {
			rep.Failed = append(rep.Failed, split.Failure{Path: f.Path, Reason: err.Error()})
			if r != nil && len(r.Recovered) > 0 {
				rep.Recovered = append(rep.Recovered, r.Recovered...)
			}
			continue
		}
		rep.Recovered = append(rep.Recovered, r.Recovered...)
		rep.SSTables = append(rep.SSTables, r)
	}
	rep.CountIndexes()
	return rep, nil
}

func splitAction(c *cli.Context) error {
	size, err := splitSize(c.String("size"))
	if err != nil {
		return usageError("split: %v", err)
	}
	paths, err := rewriteArgs(c)
	if err != nil {
		return err
	}
	o := split.Options{MaxSize: size, ResetLevel: true, NoVerify: !c.Bool("verify")}
	if c.String("to") != "" {
		if o.To, err = parseAnyVersion(c.String("to")); err != nil {
			return usageError("--to: %v", err)
		}
	}
	if o.Access, err = rewriteAccess(c); err != nil {
		return err
	}
	if c.String("out") == "" && c.Bool("drop-index-components") {
		return usageError("split: --drop-index-components goes with --out: in place each output takes a new id, which no index file has")
	}
	rep, runErr, err := runRewrite(c, paths, o, txnlog.OpUnknown)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if err := writeJSON(rep); err != nil {
			return err
		}
	} else {
		printSplitReport(c, rep)
	}
	return rewriteExit(c, rep, runErr)
}

// runRewrite runs split's or filter's rewrite of paths with o: into
// --out, or in place through upgrade's transactions, named op in their
// logs, with a pre-<command> snapshot unless --no-snapshot. runErr is the
// in-place run's error once it has a report (rewriteExit's to say); err
// is one that leaves no report.
func runRewrite(c *cli.Context, paths []string, o split.Options, op string) (rep *rewriteReport, runErr, err error) {
	name := c.Command.Name
	if c.Int("jobs") < 1 {
		return nil, nil, usageError("--jobs %d: give at least 1", c.Int("jobs"))
	}
	if out := c.String("out"); out != "" {
		rep, err = writeOut(c, paths, out, o)
		return rep, nil, err
	}
	io := split.InPlaceOptions{Options: o, Op: op, Snapshot: "pre-" + name, Words: noteWords(c, true), Force: c.Bool("force"),
		Jobs: c.Int("jobs"), CommitLogs: c.StringSlice("commitlog"), Notes: sayIndexNote(c)}
	if c.Bool("no-snapshot") {
		io.Snapshot = ""
	}
	if c.Bool("debug") && !c.Bool("json") {
		io.Log = func(line string) { hideBar(); fmt.Fprintln(stdout, line) }
	}
	prog := newProgress(name, 0)
	io.Progress = func(done, total int64) { prog.total = total; prog.update(done) }
	rep, runErr = split.InPlace(paths, io)
	prog.done()
	if rep == nil {
		return nil, nil, usageError("%s: %v", name, runErr)
	}
	return rep, runErr, nil
}

// rewriteExit is split's and filter's exit: 2 when the node looks live or
// an sstable could not be rewritten, else 0.
func rewriteExit(c *cli.Context, rep *rewriteReport, runErr error) error {
	switch {
	case runErr != nil:
		return cli.Exit("sstabletool: "+runErr.Error(), exitBadData)
	case len(rep.Failed) > 0:
		return cli.Exit(fmt.Sprintf("%s could not be %s (each was left as it was)", words.Plural(len(rep.Failed), "sstable or path"), past(c.Command.Name)), exitBadData)
	case len(rep.SSTables) == 0:
		return usageError("No valid sstables to %s", c.Command.Name)
	}
	return nil
}

func past(verb string) string {
	if verb == "split" {
		return "split"
	}
	return verb + "ed"
}

// noteWords name split's or filter's rewrite in what is said of the
// indexes (convert.NoteWords): their outputs are not one per source, and
// a filter's may hold less than its source.
func noteWords(c *cli.Context, inPlace bool) convert.NoteWords {
	w := convert.NoteWords{What: "the " + c.Command.Name, InPlace: inPlace, Verb: "splits"}
	if c.Command.Name == "filter" {
		w.Verb, w.AtMost = "filters", true
	}
	return w
}

// sayIndexNote prints a line said of an index before anything is
// written (nil with --json, whose report holds the notes).
func sayIndexNote(c *cli.Context) func(line string) {
	if c.Bool("json") {
		return nil
	}
	return func(line string) { hideBar(); fmt.Fprintln(stdout, line) }
}

// sayIndexNotes says, before anything is written, what the rewrite does
// to each index of the tables it touches (convert.IndexNote).
func sayIndexNotes(c *cli.Context, notes []convert.IndexNote, inPlace bool) {
	if say := sayIndexNote(c); say != nil {
		for _, n := range notes {
			say(n.TextWith(noteWords(c, inPlace)))
		}
	}
}

// sayIndexesDone says, after the run, what it wrote in place of the
// sstables that lost each index's files (convert.IndexNote.DoneText).
func sayIndexesDone(c *cli.Context, rep *rewriteReport) {
	w := noteWords(c, c.String("out") == "")
	for _, n := range rep.Indexes {
		if line := n.DoneText(w); line != "" {
			fmt.Fprintln(stdout, line)
		}
	}
}

// printSplitReport prints what sstablesplit prints (its "Skipping" and
// snapshot lines), and a line for each sstable split.
func printSplitReport(c *cli.Context, rep *rewriteReport) {
	hideBar()
	for _, r := range rep.Recovered {
		fmt.Fprintf(stdout, "recovered: %s\n", r)
	}
	split0 := 0
	for _, r := range rep.SSTables {
		if r.Unchanged {
			fmt.Fprintf(stdout, "Skipping %s: %s\n", r.Source, skipText(r.Why))
			continue
		}
		split0++
		verified := ""
		if r.Verified {
			verified = ", verified"
		}
		fmt.Fprintf(stdout, "%s (%s, %s) -> %s%s:\n", r.Source, words.Plural(int(r.Partitions), "partition"), bytesText(r.DataBefore), words.Plural(len(r.Outputs), "sstable"), verified)
		for _, o := range r.Outputs {
			fmt.Fprintf(stdout, "  %s: %s, Data.db %s, keys %s..%s\n", o.Data, words.Plural(int(o.Partitions), "partition"), bytesText(o.DataSize), o.First, o.Last)
		}
	}
	if split0 == 0 && len(rep.Failed) == 0 {
		fmt.Fprintln(stdout, "No sstables needed splitting.")
	}
	printRewriteEnd(c, rep, "splitting")
}

// printRewriteEnd prints what split and filter print after their
// sstables: what they wrote in place of each index's files, the
// snapshot (as sstablesplit words it), and each sstable that could not
// be rewritten (its reason's first line unless --debug).
func printRewriteEnd(c *cli.Context, rep *rewriteReport, doing string) {
	sayIndexesDone(c, rep)
	if rep.Snapshot != "" {
		fmt.Fprintf(stdout, "Pre-%s sstables snapshotted into snapshot %s\n", c.Command.Name, rep.Snapshot)
	}
	for _, f := range rep.Failed {
		msg := f.Reason
		if !c.Bool("debug") {
			msg, _, _ = strings.Cut(msg, "\n")
		}
		fmt.Fprintf(stderr, "Error %s %s: %s\n", doing, f.Path, msg)
	}
}

// skipText words a split's reason to leave an sstable as sstablesplit
// does ("Skipping X: it's size (...) is less than the split size (...)").
func skipText(why string) string {
	if strings.HasPrefix(why, "its size") {
		return "it's" + strings.TrimPrefix(why, "its")
	}
	return why
}

// bytesText is a byte count with Cassandra's rounding (FBUtilities).
func bytesText(n int64) string { return words.PrettyMemory(n, " ") }
