package main

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/split"
	"github.com/sstabletool/sstabletool/internal/words"
)

// filterCommand is the filter command.
func filterCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "filter",
		Usage:     "write sstables without some partitions (ScyllaDB's scylla sstable filter): drop a poison partition, keep a token range; out of place or in place",
		ArgsUsage: "--drop KEY... | --keep KEY... | --token-range L,R... (--out DIR | --in-place) SSTABLE|DIR... | --data DATA_DIR KEYSPACE TABLE",
		Description: "Writes each sstable again without the partitions the filter drops: --drop KEY drops those partitions,\n" +
			"--keep KEY keeps only those; --token-range L,R keeps only the partitions whose token is in (L, R]\n" +
			"(Cassandra's ranges: left-exclusive, wrapping around when L is not below R; tokens as the partitioner\n" +
			"prints them: Murmur3 signed decimals), --drop-token-range L,R drops them. A partition is written when a\n" +
			"keep selector picks it (or there is none) and no drop selector does. Keys are written as dump -k takes\n" +
			"them (a composite key as a:b, a ':' inside a value as \\:); @FILE reads keys from FILE, one a line (a\n" +
			"key that itself begins with @ is written @@...). Every other partition is written as it was, row for\n" +
			"row and cell for cell; the output keeps the source's version (--to writes another), its level and\n" +
			"repair state, and is verified (checksums, structure, derived components, and its content against the\n" +
			"source's) before anything is committed. The report names every partition dropped (key, token, bytes)\n" +
			"and the keys given that no sstable holds.\n\n" +
			"SAI and SASI files describe their sstable's Data.db: an sstable filtered loses them, and Cassandra builds\n" +
			"the index for its output. Before anything is written, each index is named with the sstables it covers,\n" +
			"those the filter rewrites and the nodetool rebuild_index that builds it at once (docs/indexes.md).\n\n" +
			"--out DIR writes one sstable per source into DIR (an empty directory, holding no SAI or SASI file whose\n" +
			"sstable is gone: --drop-index-components removes those; staged and committed at once), even when\n" +
			"nothing is dropped, and none for a source whose every partition is dropped, as ScyllaDB's filter does.\n" +
			"--in-place replaces the sstables of a stopped node through Cassandra's transaction log\n" +
			"(<version>_txn_cleanup_<uuid>.log) after a snapshot (snapshots/pre-filter-<ms>/, hard links;\n" +
			"--no-snapshot skips it): an sstable the filter drops nothing from is left as it is, one it drops\n" +
			"everything from is removed. A kill at any moment leaves, after the next run or Cassandra's startup,\n" +
			"either the source or its output live. In place, filter refuses while a process holds a file of the table\n" +
			"open (naming it), when the commit log is newer than the sstables, or when a file changes under it\n" +
			"(--force skips these checks).\n\n" +
			"Exit codes: 0 filtered, 1 a key given is in none of the sstables, 2 an sstable could not be filtered\n" +
			"(it is left as it was), bad usage, or a node that looks live.\n\n" +
			"Examples:\n" +
			"  sstabletool filter --drop 3 --in-place --data /var/lib/cassandra/data shop customers   # a poison partition, gone\n" +
			"  sstabletool filter --drop 2 --out /tmp/clean nc-1-big-Data.db          # into a copy; the source is only read\n" +
			"  sstabletool filter --keep 0 --keep 4 --out /tmp/sample /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool filter --token-range 30,32 --out /tmp/range nc-1-big-Data.db  # tokens in (30, 32]: ByteOrderedPartitioner's are the keys' hex\n" +
			"  sstabletool filter --drop-token-range 33,34 --json --out /tmp/f nc-1-big-Data.db",
		Flags: []cli.Flag{
			listFlag("drop", "drop the partition `KEY` (repeatable; @FILE: the keys in FILE, one a line)"),
			listFlag("keep", "keep only the partition `KEY` (repeatable; @FILE: the keys in FILE, one a line)"),
			listFlag("token-range", "keep only the partitions whose token is in (L, R] (repeatable), as `L,R`"),
			listFlag("drop-token-range", "drop the partitions whose token is in (L, R] (repeatable), as `L,R`"),
			&cli.StringFlag{Name: "out", Usage: "write the filtered copies into `DIR` (an empty directory, created if missing)"},
			dropIndexComponentsFlag,
			&cli.BoolFlag{Name: "in-place", Usage: "replace the sstables of a stopped node in their own directories"},
			&cli.BoolFlag{Name: "no-snapshot", Usage: "in place: don't snapshot the sstables before replacing them"},
			dataFlag,
			&cli.StringFlag{Name: "to", Usage: "output version (default: each source's): oa, nc, nb (any of ma..oa) or da"},
			&cli.BoolFlag{Name: "debug", Usage: "print each transaction's steps as they happen, and the whole of each error"},
			&cli.BoolFlag{Name: "force", Usage: "skip the checks that the node is stopped (no process holds a file of the table open; in place also: the commit log is not newer, no file changes under it)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "in place: sstables filtered at once"},
			&cli.StringSliceFlag{Name: "commitlog", Usage: "in place: the node's commit log `DIR` (default: commitlog/ beside the data directory)"},
			&cli.BoolFlag{Name: "verify", Value: true, Usage: "verify each output (checksums, structure, derived components, content against the source's) before it is committed (--verify=false to skip)"},
			rewriteAccessFlag, jsonFlag,
		},
		Action: filterAction,
	}, argSpec{min: 1, max: -1, what: "sstable or directory (or, with --data, KEYSPACE TABLE)"})
}

// valueList is a repeatable flag's values, each as given: unlike a
// StringSliceFlag's, a value is never cut at its commas (a key may hold
// one; a token range is L,R).
type valueList struct{ vals []string }

func (v *valueList) Set(s string) error { v.vals = append(v.vals, s); return nil }
func (v *valueList) String() string     { return strings.Join(v.vals, " ") }

// repeatable is a GenericFlag that flagsFirst and the help know as
// repeatable.
type repeatable struct{ *cli.GenericFlag }

func (repeatable) IsSliceFlag() bool { return true }

func listFlag(name, usage string) cli.Flag {
	return repeatable{&cli.GenericFlag{Name: name, Usage: usage, Value: &valueList{}}}
}

func listValues(c *cli.Context, name string) []string {
	if v, ok := c.Generic(name).(*valueList); ok {
		return v.vals
	}
	return nil
}

// keyArgs expands --keep's or --drop's values: a value @FILE is the keys
// in FILE, one a line (blank lines skipped), @@... a key beginning with @.
func keyArgs(flag string, vals []string) ([]string, error) {
	var out []string
	for _, v := range vals {
		switch {
		case strings.HasPrefix(v, "@@"):
			out = append(out, v[1:])
		case strings.HasPrefix(v, "@"):
			b, err := os.ReadFile(v[1:])
			if err != nil {
				return nil, usageError("filter: %s %s: %v", flag, v, err)
			}
			for _, l := range strings.Split(string(b), "\n") {
				if l = strings.TrimRight(l, "\r"); l != "" {
					out = append(out, l)
				}
			}
		default:
			out = append(out, v)
		}
	}
	return out, nil
}

// filterSpec is the command line's filter, parsed for each sstable with
// its key type and partitioner; named remembers the key bytes each key
// given parsed to, for the keys found nowhere.
type filterSpec struct {
	keep, drop             []string
	keepRanges, dropRanges []string
	mu                     sync.Mutex
	named                  map[string]string // parsed key bytes -> the key as given
}

func (f *filterSpec) build(s *sstable.SSTable) (*split.Filter, error) {
	sel := func(flag string, keys, ranges []string) (*split.Selection, error) {
		if len(keys) == 0 && len(ranges) == 0 {
			return nil, nil
		}
		out := &split.Selection{Keys: map[string]bool{}}
		for _, k := range keys {
			b, err := parseKey(s, "filter: "+flag, k)
			if err != nil {
				return nil, err
			}
			out.Keys[string(b)] = true
			f.mu.Lock()
			f.named[string(b)] = k
			f.mu.Unlock()
		}
		for _, r := range ranges {
			tr, err := split.ParseTokenRange(s.Partitioner(), r)
			if err != nil {
				return nil, usageError("filter: %s: %v", flag, err)
			}
			out.Ranges = append(out.Ranges, tr)
		}
		return out, nil
	}
	keep, err := sel("--keep/--token-range", f.keep, f.keepRanges)
	if err != nil {
		return nil, err
	}
	drop, err := sel("--drop/--drop-token-range", f.drop, f.dropRanges)
	if err != nil {
		return nil, err
	}
	return &split.Filter{Keep: keep, Drop: drop}, nil
}

// filterReport is --json's document: the rewrite's report and the keys
// given that no sstable holds.
type filterReport struct {
	*rewriteReport
	KeysNotFound []string `json:"keys_not_found"`
}

func filterAction(c *cli.Context) error {
	spec := &filterSpec{keepRanges: listValues(c, "token-range"), dropRanges: listValues(c, "drop-token-range"), named: map[string]string{}}
	var err error
	if spec.keep, err = keyArgs("--keep", listValues(c, "keep")); err != nil {
		return err
	}
	if spec.drop, err = keyArgs("--drop", listValues(c, "drop")); err != nil {
		return err
	}
	if len(spec.keep)+len(spec.drop)+len(spec.keepRanges)+len(spec.dropRanges) == 0 {
		return usageError("filter: say what to drop or keep: --drop KEY, --keep KEY, --token-range L,R or --drop-token-range L,R (see sstabletool filter --help)")
	}
	inPlace, out := c.Bool("in-place"), c.String("out")
	switch {
	case inPlace && out != "":
		return usageError("filter: --out and --in-place exclude each other")
	case !inPlace && out == "":
		return usageError("filter: give --out DIR (filtered copies) or --in-place (a stopped node's sstables, replaced)")
	}
	if inPlace && c.Bool("drop-index-components") {
		return usageError("filter: --drop-index-components goes with --out: in place each output takes a new id, which no index file has")
	}
	paths, err := rewriteArgs(c)
	if err != nil {
		return err
	}
	o := split.Options{Filter: spec.build, NoVerify: !c.Bool("verify")}
	if c.String("to") != "" {
		if o.To, err = parseAnyVersion(c.String("to")); err != nil {
			return usageError("--to: %v", err)
		}
	}
	if o.Access, err = rewriteAccess(c); err != nil {
		return err
	}
	rep, runErr, err := runRewrite(c, paths, o, txnlog.OpCleanup)
	if err != nil {
		return err
	}
	found := map[string]bool{}
	for _, r := range rep.SSTables {
		for _, k := range r.Named() {
			found[string(k)] = true
		}
	}
	notFound := []string{}
	seen := map[string]bool{}
	for _, k := range append(append([]string{}, spec.drop...), spec.keep...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		hit := false
		for b, text := range spec.named {
			hit = hit || text == k && found[b]
		}
		if !hit {
			notFound = append(notFound, k)
		}
	}
	if c.Bool("json") {
		if err := writeJSON(filterReport{rep, notFound}); err != nil {
			return err
		}
	} else {
		printFilterReport(c, rep, notFound)
	}
	if err := rewriteExit(c, rep, runErr); err != nil {
		return err
	}
	if len(notFound) > 0 {
		return cli.Exit("", exitProblem)
	}
	return nil
}

// printFilterReport prints a line per sstable and one per partition
// dropped.
func printFilterReport(c *cli.Context, rep *rewriteReport, notFound []string) {
	hideBar()
	for _, r := range rep.Recovered {
		fmt.Fprintf(stdout, "recovered: %s\n", r)
	}
	for _, r := range rep.SSTables {
		if r.Unchanged {
			fmt.Fprintf(stdout, "%s: left as it is: %s\n", r.Source, r.Why)
			continue
		}
		dest := "removed: every partition dropped"
		if len(r.Outputs) > 0 {
			dest = "-> " + r.Outputs[0].Data
		}
		verified := ""
		if r.Verified {
			verified = ", verified"
		}
		fmt.Fprintf(stdout, "%s %s (%s kept, %s dropped (%s)%s)\n", r.Source, dest, words.Plural(int(r.Partitions), "partition"),
			words.Plural(int(r.Dropped), "partition"), bytesText(r.DroppedBytes), verified)
		for _, p := range r.DroppedKeys {
			fmt.Fprintf(stdout, "  dropped partition %s (token %s, %s at byte %d)\n", p.Key, p.Token, bytesText(p.Size), p.Position)
		}
		if r.DroppedNotListed > 0 {
			fmt.Fprintf(stdout, "  ... and %s more\n", words.Plural(int(r.DroppedNotListed), "partition"))
		}
	}
	printRewriteEnd(c, rep, "filtering")
	for _, k := range notFound {
		fmt.Fprintf(stderr, "sstabletool: key %s is in none of the sstables\n", k)
	}
}
