package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/upgrade"
	"github.com/sstabletool/sstabletool/merge"
)

// savingsCommand is the savings command.
func savingsCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "savings",
		Usage:     "what converting sstables to oa (or to da, trie-indexed) would save, exactly, without writing anything",
		ArgsUsage: "PATH...",
		Description: "For each legacy sstable (nb, nc, ...) and in total: bytes per component now and after conversion\n" +
			"to oa, the difference and percent, and the LIVE / non-LIVE DeletionTimes by place (partition\n" +
			"headers, index entries, index blocks). Uncompressed sizes are exactly what convert writes; the\n" +
			"compressed Data.db size comes from really recompressing every chunk in memory.\n" +
			"--to da estimates Cassandra 5.0's trie-indexed format instead: Index.db and Summary.db become\n" +
			"Partitions.db and Rows.db (built in memory, blocks cut at --column-index-size, 16 KiB by default),\n" +
			"and the index line sums the partition index before and after. From da, an explicit --to oa (or\n" +
			"another big version) estimates the way back; without --to, da has nothing to save. With several\n" +
			"tables (-r over a data directory) the totals per table and per keyspace follow, most bytes saved\n" +
			"first; --json holds them too (tables, keyspaces, and the host), to merge the reports of many nodes.\n\n" +
			"--compaction estimates a major compaction of each table instead (convert --merge with the same --to,\n" +
			"--compression, --column-index-size, --now, --purge and --gc-grace; --to defaults to the newest sstable's\n" +
			"version): per component, the inputs' total now and the one sstable it would write, byte for byte, and\n" +
			"the Data.db bytes it reclaims by reason (overwritten cells, data shadowed by partition, range, row and\n" +
			"collection deletions, expired TTLs, purgeable tombstones, and merging; see docs/merge.md). In --json\n" +
			"each table is one entry of \"sstables\" whose components carry before (the inputs' total) and after.\n\n" +
			"Examples:\n" +
			"  sstabletool savings nc-1-big-Data.db\n" +
			"  sstabletool savings --to da nc-1-big-Data.db                       # Index.db+Summary.db vs the tries\n" +
			"  sstabletool savings -r /var/lib/cassandra/data --json | jq .total   # the whole node\n" +
			"  sstabletool savings -r /var/lib/cassandra/data/shop                  # totals per table and keyspace at the end\n" +
			"  sstabletool savings --compaction /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool savings --compaction -r --purge --now 2024-06-01T00:00:00Z /var/lib/cassandra/data --json | jq .total.reclaimed",
		Flags: []cli.Flag{
			versionFlag(&cli.StringFlag{Name: "to", Value: "oa", Usage: "target version: oa (compact deletion times) or da (trie-indexed; any big or BTI version)"}),
			&cli.IntFlag{Name: "column-index-size", Usage: "index block size in KiB for blocks cut anew (to or from da; default 16 for da, 64 for big)"},
			&cli.BoolFlag{Name: "compaction", Usage: "what a major compaction of each table (convert --merge with the same options) would write instead: per component, and the bytes reclaimed by reason"},
			compressionFlag(&cli.StringFlag{Name: "compression", Usage: "with --compaction: Data.db compression as convert --merge takes it: keep (default: the newest sstable's), none, or a compressor", Value: "keep"}, "keep"),
			&cli.IntFlag{Name: "chunk-length", Usage: "with --compaction and --compression: chunk length in KiB (default 16)"},
			nowFlag, purgeFlag, gcGraceFlag, schemaFlag, tableFlag,
			rewriteAccessFlag, jsonFlag, recursiveFlag, snapshotsFlag, backupsFlag},
		Action: savingsAction,
	}, sstableArgs)
}

type savingsTotal struct {
	SSTables   int                 `json:"sstables"`
	Partitions int64               `json:"partitions"`
	Components []convert.Component `json:"components"`
	// DataUncompressed sums Data.db's uncompressed lengths.
	DataUncompressed convert.Component `json:"data_uncompressed"`
	// Index sums the partition index components (Result.Index).
	Index convert.Component `json:"index"`
	// IndexFiles sums the SAI and SASI files (Result.IndexFiles): apart
	// from the totals, which they are not part of.
	IndexFiles convert.Component `json:"index_files"`
	Before     int64             `json:"before"`
	After      int64             `json:"after"`
	Counts     convert.Counts    `json:"deletion_times"`
	// Reclaimed (--compaction) adds up the tables' reclaimed bytes by reason.
	Reclaimed *merge.Reclaim `json:"reclaimed,omitempty"`
}

// savingsGroup totals one table or keyspace: what a report from many
// nodes is merged by (add the byte counts of the same keyspace and table).
type savingsGroup struct {
	Keyspace   string `json:"keyspace"`
	Table      string `json:"table,omitempty"`
	SSTables   int    `json:"sstables"`
	Partitions int64  `json:"partitions"`
	Before     int64  `json:"before"`
	After      int64  `json:"after"`
	Saved      int64  `json:"saved"`
}

type savingsReport struct {
	// Host is the machine the report was made on, for merging reports.
	Host     string            `json:"host,omitempty"`
	SSTables []*convert.Result `json:"sstables"`
	Total    savingsTotal      `json:"total"`
	// Tables and Keyspaces total the sstables by the table and keyspace
	// their directory names (<data>/<keyspace>/<table>-<id>/), most bytes
	// saved first; "" for sstables outside such a layout.
	Tables    []savingsGroup `json:"tables"`
	Keyspaces []savingsGroup `json:"keyspaces"`
	// Errors lists the sstables that could not be read.
	Errors []sstableError `json:"errors,omitempty"`

	byName    map[string]int // Total.Components' index by name
	tables    map[[2]string]*savingsGroup
	keyspaces map[string]*savingsGroup
}

func savingsAction(c *cli.Context) error {
	if c.Bool("compaction") {
		return savingsCompaction(c)
	}
	for _, f := range []string{"now", "purge", "gc-grace", "schema", "table", "compression", "chunk-length"} {
		if c.IsSet(f) {
			return usageError("savings: --%s works with --compaction", f)
		}
	}
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	a, err := rewriteAccess(c)
	if err != nil {
		return err
	}
	to, err := parseAnyVersion(c.String("to"))
	if err != nil {
		return usageError("--to: %v", err)
	}
	kib := c.Int("column-index-size")
	if c.IsSet("column-index-size") && (kib <= 0 || kib > 1<<21) {
		return usageError("--column-index-size %d: expected KiB between 1 and %d", kib, 1<<21)
	}
	rep := newSavingsReport()
	// One progress bar over every Data.db's bytes.
	var total, before int64
	for _, f := range sc.found {
		if fi, err := os.Stat(f.Path); err == nil {
			total += fi.Size()
		}
	}
	prog := newProgress("savings", total)
	err = sc.each(func(p string) error {
		d, _, err := format.ParseDescriptor(p)
		if err != nil {
			return err
		}
		// A da sstable's deletion times are compact already: the default
		// --to oa has nothing to save, an explicit big --to estimates the
		// rewrite back to Index.db and Summary.db, as convert writes it.
		back := d.Version.IsBTI() && c.IsSet("to")
		if d.Version == to || !to.IsBTI() && d.Version.HasUIntDeletionTime && !back {
			// Nothing to save, but only of an sstable that is there and
			// opens as every read command opens it (Statistics.db, the
			// chunk metadata, the index), so a broken one is not called fine.
			if _, err := os.Stat(d.Path(format.ComponentData)); errors.Is(err, os.ErrNotExist) {
				return badData(fmt.Errorf("%s: Data.db is missing", d.Path(format.ComponentData)))
			} else if err != nil {
				return badData(err)
			}
			s, err := sstable.Open(p, sstable.Options{Access: a})
			if err != nil {
				return badData(err)
			}
			s.Close()
			if !c.Bool("json") {
				fmt.Fprintf(stdout, "%s: already %s, nothing to save\n\n", p, d.Version.Name)
			}
			return nil
		}
		var size int64
		if fi, err := os.Stat(p); err == nil {
			size = fi.Size()
		}
		res, err := convert.Estimate(p, convert.Options{To: to, Access: a, ColumnIndexSize: kib << 10,
			Progress: func(done, tot int64) {
				if tot > 0 {
					prog.update(before + size*done/tot)
				}
			}})
		before += size
		if err != nil {
			return err
		}
		rep.add(res, filepath.Dir(p), 1)
		if !c.Bool("json") {
			fmt.Fprintf(stdout, "%s (%s -> %s, %d partitions)\n", p, res.From, res.To, res.Partitions)
			printSavings(stdout, to.Name, append(slices.Clone(res.Components), res.Dropped...), res.DataUncompressed, res.Index, res.IndexFiles, &res.Counts)
			for _, why := range res.Refusals {
				fmt.Fprintf(stdout, "  convert refuses this sstable as it stands (the sizes above assume it was fixed): %s\n", why)
			}
			fmt.Fprintln(stdout)
		}
		return nil
	}, func(e sstableError) { rep.Errors = append(rep.Errors, e) })
	prog.done()
	if err != nil {
		return err
	}
	rep.finish()
	if c.Bool("json") {
		if err := writeJSON(rep); err != nil {
			return err
		}
		return sc.err()
	}
	if rep.Total.SSTables > 1 {
		fmt.Fprintf(stdout, "TOTAL (%d sstables, %d partitions)\n", rep.Total.SSTables, rep.Total.Partitions)
		printSavings(stdout, to.Name, rep.Total.Components, rep.Total.DataUncompressed, rep.Total.Index, rep.Total.IndexFiles, &rep.Total.Counts)
	}
	if len(rep.Tables) > 1 || len(rep.Tables) == 1 && rep.Tables[0].Table != "" {
		fmt.Fprintln(stdout)
		printGroups(stdout, to.Name, "BY TABLE (most saved first)", "keyspace.table", rep.Tables)
		fmt.Fprintln(stdout)
		printGroups(stdout, to.Name, "BY KEYSPACE", "keyspace", rep.Keyspaces)
	}
	return sc.err()
}

func newSavingsReport() *savingsReport {
	rep := &savingsReport{SSTables: []*convert.Result{}, byName: map[string]int{},
		tables: map[[2]string]*savingsGroup{}, keyspaces: map[string]*savingsGroup{}}
	rep.Host, _ = os.Hostname()
	return rep
}

// add counts one result (of n sstables in directory dir) into the
// totals and its table's and keyspace's.
func (rep *savingsReport) add(res *convert.Result, dir string, n int) {
	ks, tbl := upgrade.Names(dir)
	g := rep.tables[[2]string{ks, tbl}]
	if g == nil {
		g = &savingsGroup{Keyspace: ks, Table: tbl}
		rep.tables[[2]string{ks, tbl}] = g
	}
	k := rep.keyspaces[ks]
	if k == nil {
		k = &savingsGroup{Keyspace: ks}
		rep.keyspaces[ks] = k
	}
	for _, grp := range []*savingsGroup{g, k} {
		grp.SSTables += n
		grp.Partitions += res.Partitions
		before, after := res.Totals()
		grp.Before += before
		grp.After += after
		grp.Saved = grp.Before - grp.After
	}
	rep.SSTables = append(rep.SSTables, res)
	t := &rep.Total
	t.SSTables += n
	t.Partitions += res.Partitions
	t.Counts.Add(&res.Counts)
	t.DataUncompressed.Name = res.DataUncompressed.Name
	t.DataUncompressed.Before += res.DataUncompressed.Before
	t.DataUncompressed.After += res.DataUncompressed.After
	if t.Index.Name == "" || t.Index.Name == res.Index.Name {
		t.Index.Name = res.Index.Name
	} else {
		t.Index.Name = "index components of both formats"
	}
	t.IndexFiles.Before += res.IndexFiles.Before
	t.Index.Before += res.Index.Before
	t.Index.After += res.Index.After
	for _, comp := range append(slices.Clone(res.Components), res.Dropped...) {
		i, ok := rep.byName[comp.Name]
		if !ok {
			i = len(t.Components)
			rep.byName[comp.Name] = i
			t.Components = append(t.Components, convert.Component{Name: comp.Name})
		}
		t.Components[i].Before += comp.Before
		t.Components[i].After += comp.After
		t.Before += comp.Before
		t.After += comp.After
	}
	if res.Reclaimed != nil {
		if t.Reclaimed == nil {
			t.Reclaimed = &merge.Reclaim{}
		}
		t.Reclaimed.Add(res.Reclaimed)
	}
}

func (rep *savingsReport) finish() {
	rep.Tables, rep.Keyspaces = sortedGroups(rep.tables), sortedGroups(rep.keyspaces)
}

// sortedGroups lists groups by bytes saved, most first, then by name.
func sortedGroups[K comparable](m map[K]*savingsGroup) []savingsGroup {
	out := []savingsGroup{}
	for _, g := range m {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Saved != b.Saved {
			return a.Saved > b.Saved
		}
		if a.Keyspace != b.Keyspace {
			return a.Keyspace < b.Keyspace
		}
		return a.Table < b.Table
	})
	return out
}

func printGroups(w io.Writer, to, title, col string, groups []savingsGroup) {
	fmt.Fprintln(w, title)
	fmt.Fprintf(w, "  %-40s %8s %14s %14s %12s %8s\n", col, "sstables", "now", "as "+to, "saved", "saved%")
	for _, g := range groups {
		name := g.Keyspace
		if name == "" {
			name = "(outside <keyspace>/<table>-<id>/)"
		}
		if g.Table != "" {
			name += "." + g.Table
		}
		fmt.Fprintf(w, "  %-40s %8d %14d %14d %12d %8s\n", name, g.SSTables, g.Before, g.After, g.Saved, pct(g.Saved, g.Before))
	}
}

func printSavings(w io.Writer, to string, comps []convert.Component, data, idx, indexFiles convert.Component, counts *convert.Counts) {
	fmt.Fprintf(w, "  %-20s %14s %14s %12s %8s\n", "component", "now", "as "+to, "saved", "saved%")
	var before, after int64
	for _, c := range comps {
		fmt.Fprintf(w, "  %-20s %14d %14d %12d %8s\n", c.Name, c.Before, c.After, c.Before-c.After, pct(c.Before-c.After, c.Before))
		before += c.Before
		after += c.After
	}
	fmt.Fprintf(w, "  %-20s %14d %14d %12d %8s\n", "all files", before, after, before-after, pct(before-after, before))
	printIndexFiles(w, indexFiles)
	fmt.Fprintf(w, "  %-20s %14d %14d %12d %8s   (not a file: what the rewrite removes before compression)\n",
		"Data.db uncompressed", data.Before, data.After, data.Before-data.After, pct(data.Before-data.After, data.Before))
	if before, after, _ := strings.Cut(idx.Name, " -> "); before != after {
		// Only a change of format replaces the index components.
		fmt.Fprintf(w, "  %-20s %14d %14d %12d %8s   (%s)\n",
			"index components", idx.Before, idx.After, idx.Before-idx.After, pct(idx.Before-idx.After, idx.Before), idx.Name)
	}
	if counts == nil {
		return // a merge re-encodes every DeletionTime: there is no rewrite to count
	}
	fmt.Fprintf(w, "  DeletionTimes:       %10s %10s\n", "LIVE", "non-LIVE")
	for _, pc := range counts.ByPlace() {
		fmt.Fprintf(w, "    %-18s %10d %10d\n", pc.Place, pc.Live, pc.NonLive)
	}
	fmt.Fprintf(w, "    (index blocks without an end-open marker: %d)\n", counts.BlocksWithoutMarker)
}

// printIndexFiles prints the SAI and SASI files' bytes apart from the
// table's: a rewrite leaves them out and Cassandra builds them again, so
// they are not saved.
func printIndexFiles(w io.Writer, c convert.Component) {
	if c.Before == 0 {
		return
	}
	fmt.Fprintf(w, "  %-20s %14d %14s %12s %8s   (not in the totals: the rewrite leaves them out, Cassandra builds them again)\n",
		"SAI/SASI files", c.Before, "rebuilt", "-", "-")
}

func pct(part, whole int64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(part)/float64(whole))
}
