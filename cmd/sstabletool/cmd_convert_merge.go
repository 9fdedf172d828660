package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/merge"
)

// convertMerged is convert --merge: each table's sstables merged and
// written as one sstable (an offline major compaction) into --out (with
// -r, into --out/<keyspace>/<table directory>/ for each table).
func convertMerged(c *cli.Context, o convert.Options) error {
	if c.Bool("dry-run") {
		return usageError("convert --merge: --dry-run is savings --compaction (the exact sizes, nothing written)")
	}
	if c.Bool("cap-deletion-times") {
		return usageError("convert --merge: --cap-deletion-times is not supported: the merge re-encodes every row")
	}
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	var results []any
	failedVerification := 0
	err = mergeEach(c, "merged", func(g tableGroup) error {
		t, err := openTable(c, g, sf)
		if err != nil {
			return err
		}
		defer closeTable(t)
		mo, err := mergeConvertOptions(c, t, sf, o)
		if err != nil {
			return err
		}
		out := c.String("out")
		if c.Bool("recursive") {
			out = filepath.Join(out, filepath.Base(filepath.Dir(g.dir)), filepath.Base(g.dir))
		}
		prog := newProgress("convert --merge "+t.Dir().Dir, t.DataLength())
		mo.Progress = func(done, _ int64) { prog.update(done) }
		res, err := convert.Merge(t, out, mo)
		prog.done()
		if res != nil && !c.Bool("json") {
			for _, n := range res.Recovered {
				fmt.Fprintf(stdout, "recovered: %s\n", n)
			}
		}
		if err != nil && res != nil && len(res.Problems) > 0 {
			failedVerification++
			fmt.Fprintln(stderr, "sstabletool:", err)
			results = append(results, res)
			return nil
		}
		if err != nil {
			return err
		}
		results = append(results, res)
		if c.Bool("json") {
			return nil
		}
		verified := ""
		if res.Verified {
			verified = ", verified"
		}
		fmt.Fprintf(stdout, "%d sstables (%s) -> %s (%s, %d partitions%s)\n", len(res.Inputs), res.From, res.Output, res.To, res.Partitions, verified)
		var before, after int64
		for _, comp := range append(res.Components, res.Dropped...) {
			before += comp.Before
			after += comp.After
		}
		fmt.Fprintf(stdout, "  %d bytes -> %d bytes\n", before, after)
		return nil
	})
	if c.Bool("json") {
		if werr := writeJSON(results); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	if failedVerification > 0 {
		return cli.Exit(fmt.Sprintf("%d table(s) failed verification; their output was discarded", failedVerification), exitProblem)
	}
	return nil
}

// mergeConvertOptions are convert's options for a merged conversion of
// table t, with --now, --purge and --gc-grace.
func mergeConvertOptions(c *cli.Context, t *merge.Table, sf *inspect.SchemaSource, o convert.Options) (convert.MergeOptions, error) {
	m, err := mergeOptions(c, t, sf)
	if err != nil {
		return convert.MergeOptions{}, err
	}
	return convert.MergeOptions{To: o.To, Compression: o.Compression, Uncompressed: o.Uncompressed, ColumnIndexSize: o.ColumnIndexSize,
		Verify: o.Verify, Merge: m, Access: o.Access}, nil
}
