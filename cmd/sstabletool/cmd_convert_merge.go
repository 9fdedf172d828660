package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
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
	rw := &rewrites{json: c.Bool("json")}
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
		if !c.Bool("json") {
			// With -r a secondary index table is a group of its own.
			if err := printIndexNotes(g.found, "the merge", false, c.Bool("recursive")); err != nil {
				return err
			}
		}
		out := c.String("out")
		if c.Bool("recursive") {
			if _, base, ok := format.IndexTableOf(g.dir); ok {
				// A secondary index's table: inside its table's directory.
				out = filepath.Join(out, filepath.Base(filepath.Dir(base)), filepath.Base(base), filepath.Base(g.dir))
			} else {
				out = filepath.Join(out, filepath.Base(filepath.Dir(g.dir)), filepath.Base(g.dir))
			}
		}
		res, err := withProgress("convert --merge "+t.Dir().Dir, func(progress func(done, total int64)) (*convert.Result, error) {
			mo.Progress = progress
			return convert.Merge(t, out, mo)
		})
		if ok, err := rw.converted(res, err); !ok {
			return err
		}
		verified := ""
		if res.Verified {
			verified = ", verified"
		}
		fmt.Fprintf(stdout, "%d sstables (%s) -> %s (%s, %d partitions%s)\n", len(res.Inputs), res.From, res.Output, res.To, res.Partitions, verified)
		before, after := res.Totals()
		fmt.Fprintf(stdout, "  %d bytes -> %d bytes\n", before, after)
		return nil
	})
	return rw.end(err, fmt.Sprintf("%d table(s) failed verification; their output was discarded", rw.problems))
}

// mergeConvertOptions are convert's options for a merged conversion of
// table t, with --now, --purge and --gc-grace.
func mergeConvertOptions(c *cli.Context, t *merge.Table, sf *inspect.SchemaSource, o convert.Options) (convert.MergeOptions, error) {
	m, err := mergeOptions(c, t, sf)
	if err != nil {
		return convert.MergeOptions{}, err
	}
	return convert.MergeOptions{To: o.To, Compression: o.Compression, Uncompressed: o.Uncompressed, ColumnIndexSize: o.ColumnIndexSize,
		DropIndexComponents: o.DropIndexComponents,
		Verify:              o.Verify, Merge: m, Access: o.Access}, nil
}
