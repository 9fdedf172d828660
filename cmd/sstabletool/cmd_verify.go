package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/verify"
)

func init() {
	register(&cli.Command{
		Name:      "verify",
		Usage:     "check every checksum and the structure of sstables; exit 0 when clean",
		ArgsUsage: "PATH...",
		Description: "Checks per-chunk CRC32 of compressed Data.db (or CRC.db for uncompressed), Digest.crc32, the\n" +
			"Statistics.db metadata checksums, that every Index.db entry points at a partition start with the same\n" +
			"key, that keys ascend in the partitioner's token order, that Summary.db samples are Index.db entries,\n" +
			"that the bloom filter holds every key, and decodes every row and cell of Data.db.\n\n" +
			"Exit codes: 0 clean, 1 problems found (each listed with file, component and byte offset).",
		Flags:  []cli.Flag{accessFlag, jsonFlag, recursiveFlag, schemaFlag},
		Action: verifyAction,
	}, sstableArgs)
}

func verifyAction(c *cli.Context) error {
	paths, err := sstablePaths(c)
	if err != nil {
		return err
	}
	o, err := openOptions(c)
	if err != nil {
		return err
	}
	var reports []*verify.Report
	bad := 0
	for _, p := range paths {
		if c.String("schema") != "" {
			// Cross-check the types first: a mismatch is bad usage, not damage.
			s, err := openSSTable(c, p)
			if err != nil {
				return err
			}
			s.Close()
		}
		prog := newProgress("verify "+p, 0)
		r := verify.SSTable(p, o, func(done, total int64) { prog.total = total; prog.update(done) })
		prog.done()
		reports = append(reports, r)
		if !r.OK() {
			bad++
		}
		if c.Bool("json") {
			continue
		}
		if r.OK() {
			fmt.Fprintf(stdout, "OK   %s (%d partitions; %d checks)\n", r.SSTable, r.Partitions, len(r.Checks))
			continue
		}
		fmt.Fprintf(stdout, "FAIL %s: %d problem(s)\n", r.SSTable, len(r.Problems))
		for _, pr := range r.Problems {
			fmt.Fprintf(stdout, "  - %s\n", pr)
		}
	}
	if c.Bool("json") {
		if err := writeJSON(reports); err != nil {
			return err
		}
	}
	if bad > 0 {
		return cli.Exit(fmt.Sprintf("%d of %d sstable(s) failed verification", bad, len(paths)), exitProblem)
	}
	return nil
}
