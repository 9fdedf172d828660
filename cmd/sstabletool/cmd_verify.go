package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/verify"
)

// verifyCommand is the verify command.
func verifyCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "verify",
		Usage:     "check every checksum and the structure of sstables; exit 0 when clean",
		ArgsUsage: "PATH...",
		Description: "Checks per-chunk CRC32 of compressed Data.db (or CRC.db for uncompressed), Digest.crc32, the\n" +
			"Statistics.db metadata checksums, that keys ascend in the partitioner's token order, that the bloom\n" +
			"filter holds every key, and decodes every row and cell of Data.db. Then the partition index:\n" +
			"  big (nb, nc, oa...): every Index.db entry points at a partition start with the same key, promoted\n" +
			"    index blocks against the rows, Summary.db samples are Index.db entries;\n" +
			"  BTI (da): Partitions.db reaches every partition and only those (key prefix, hash byte, a lookup\n" +
			"    of the full key) and its footer holds the key count and the first and last keys; Rows.db\n" +
			"    entries and blocks against the rows (block starts, separators, open range deletions); trie\n" +
			"    pointers in range; and both files compared byte for byte with what Cassandra's trie writer\n" +
			"    produces for the partitions in Data.db.\n\n" +
			"Statistics.db's bounds and counts (timestamps, local deletion times, TTLs, covered clusterings, row\n" +
			"and column counts) are rebuilt from the rows: covering less than the rows is a problem (a read could\n" +
			"skip live data), covering more (as ScyllaDB writes some) a warning.\n\n" +
			"Exit codes: 0 clean (warnings included), 1 problems found (each listed with file, component and byte\n" +
			"offset).\n\n" +
			"Examples:\n" +
			"  sstabletool verify nc-1-big-Data.db\n" +
			"  sstabletool verify -r /var/lib/cassandra/data/shop --json | jq '.[] | select(.problems)'",
		Flags:  []cli.Flag{accessFlag, jsonFlag, recursiveFlag, snapshotsFlag, backupsFlag, schemaFlag, tableFlag},
		Action: verifyAction,
	}, sstableArgs)
}

func verifyAction(c *cli.Context) error {
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	o, err := openOptions(c)
	if err != nil {
		return err
	}
	var reports []any // *verify.Report or sstableError, in order
	bad, checked := 0, 0
	// What a node's schema says of an sstable (a column whose type
	// differs from the header's, a table it cannot speak for) is a
	// warning of its report, as on stderr: worth knowing, no failure.
	var schemaWarnings []string
	if say := sf.OnWarning; say != nil {
		sf.OnWarning = func(msg string) {
			if !slices.Contains(schemaWarnings, msg) {
				schemaWarnings = append(schemaWarnings, msg)
			}
			say(msg)
		}
	}
	err = sc.each(func(p string) error {
		schemaWarnings = schemaWarnings[:0]
		// An sstable this tool cannot read at all (a format it does not
		// support yet) is not damage: it was not checked. A schema whose
		// types differ is bad usage, not damage either. Damage found while
		// opening is verify's to report.
		s, err := openFound(c, p, sf)
		var unsupported *format.UnsupportedFormatError
		switch {
		case errors.As(err, &unsupported):
			return err
		case err != nil && sf != nil:
			if _, oerr := sstable.Open(p, o); oerr == nil {
				return err
			}
		case err == nil:
			s.Close()
		}
		prog := newProgress("verify "+p, 0)
		r := verify.SSTable(p, o, func(done, total int64) { prog.total = total; prog.update(done) })
		prog.done()
		for _, n := range schemaWarnings {
			r.Warnings = append(r.Warnings, verify.Problem{File: strings.TrimSuffix(p, format.ComponentData) + format.ComponentStatistics,
				Component: format.ComponentStatistics, Offset: -1, Message: "schema: " + strings.TrimPrefix(n, p+": ")})
		}
		checked++
		if c.Bool("json") {
			reports = append(reports, r)
		}
		if !r.OK() {
			bad++
		}
		if c.Bool("json") {
			return nil
		}
		if r.OK() {
			warned := ""
			if len(r.Warnings) > 0 {
				warned = "; " + words.Plural(len(r.Warnings), "warning")
			}
			fmt.Fprintf(stdout, "OK   %s (%s; %s%s)\n", r.SSTable, words.Plural(r.Partitions, "partition"), words.Plural(len(r.Checks), "check"), warned)
		} else {
			fmt.Fprintf(stdout, "FAIL %s: %s\n", r.SSTable, words.Plural(len(r.Problems), "problem"))
			for _, pr := range r.Problems {
				fmt.Fprintf(stdout, "  - %s\n", pr)
			}
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(stdout, "  warning: %s\n", w)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(stdout, "  note: %s\n", n)
		}
		return nil
	}, func(e sstableError) { reports = append(reports, e) })
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if err := writeJSON(reports); err != nil {
			return err
		}
	}
	failed := ""
	if bad > 0 {
		failed = fmt.Sprintf("%d of %s failed verification", bad, words.Plural(checked, "sstable"))
	}
	// Not being able to check is worse than finding problems: exit 2.
	if err := sc.err(); err != nil {
		if failed != "" {
			fmt.Fprintln(stderr, "sstabletool:", failed)
		}
		return err
	}
	if failed != "" {
		return cli.Exit(failed, exitProblem)
	}
	return nil
}
