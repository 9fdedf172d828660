package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/memsim"
	"github.com/sstabletool/sstabletool/workload"
)

func init() {
	register(&cli.Command{
		Name:      "memsim",
		Usage:     "replay a workload into skip-list, trie and hash-ordered memtables and show their memory footprint",
		ArgsUsage: " ",
		Description: "memsim replays a workload profile (built-in: " + strings.Join(workload.BuiltinNames(), ", ") + ",\n" +
			"or a YAML/JSON file, see docs/workload.md) into Go memtables built like Cassandra's and prints,\n" +
			"per memtable and memtable_allocation_type, the bytes Cassandra would account on and off heap.\n" +
			"Defaults model JDK 11 and Cassandra before CASSANDRA-14227 (--cassandra 4.1), the conditions of\n" +
			"the published ReadSmallPartitionsBench figures.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Value: "small-partitions", Usage: "built-in profile name or profile file"},
			&cli.Int64Flag{Name: "ops", Value: -1, Usage: "operations to replay (default: the profile's)"},
			&cli.Int64Flag{Name: "partitions", Usage: "override the profile's partition count (default: max(profile's, --ops) for sequential profiles)"},
			&cli.Uint64Flag{Name: "seed", Usage: "override the profile's seed"},
			&cli.StringSliceFlag{Name: "from-sstable", Usage: "replay every partition, row and cell of these sstables (files or directories of one table) instead of a profile"},
			&cli.StringFlag{Name: "memtable", Value: "skiplist,trie,hashordered", Usage: "comma-separated memtables"},
			&cli.StringFlag{Name: "allocation", Value: "unslabbed_heap_buffers,heap_buffers,offheap_buffers,offheap_objects", Usage: "comma-separated memtable_allocation_type values"},
			&cli.IntFlag{Name: "jdk", Value: 11, Usage: "JVM: 11 or 17 (a heap ByteBuffer is 48 or 56 bytes)"},
			&cli.StringFlag{Name: "cassandra", Value: "4.1", Usage: "4.1 (before CASSANDRA-14227) or 5.0 (BTreeRow 8 bytes larger)"},
			&cli.IntFlag{Name: "shards", Value: runtime.NumCPU(), Usage: "TrieMemtable shards (Cassandra's default is the core count)"},
			&cli.StringFlag{Name: "partitioner", Value: "murmur3", Usage: "murmur3 or byteordered"},
			&cli.Int64Flag{Name: "heap-space", Value: 2048, Usage: "memtable_heap_space in MiB"},
			&cli.Int64Flag{Name: "offheap-space", Value: 2048, Usage: "memtable_offheap_space in MiB"},
			&cli.Float64Flag{Name: "cleanup-threshold", Value: 1.0 / 3, Usage: "memtable_cleanup_threshold (default 1/(1+memtable_flush_writers) with 2 writers)"},
			&cli.BoolFlag{Name: "json", Usage: `print {"results": [...]} as JSON`},
			&cli.StringFlag{Name: "svg", Usage: "write a chart of footprint against operations to this SVG file"},
			&cli.StringFlag{Name: "html", Usage: "write the chart and table to this HTML file"},
			&cli.BoolFlag{Name: "progress", Value: isatty.IsTerminal(os.Stderr.Fd()), Usage: "show progress on stderr (default: when stderr is a terminal)"},
			// Kept so that scripts passing it still run: the memtables now
			// share one replay, so there is nothing to run in parallel.
			&cli.IntFlag{Name: "parallel", Hidden: true, Usage: "no effect (the memtables share one replay)"},
			&cli.BoolFlag{Name: "go-heap", Usage: "measure the Go heap each memtable holds (runs the garbage collector)"},
		},
		Action: runMemsim,
	})
}

func usageErr(format string, args ...any) error {
	return cli.Exit("memsim: "+fmt.Sprintf(format, args...), exitBadData)
}

func runMemsim(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usageErr("unexpected argument %q (use --profile or --from-sstable)", c.Args().First())
	}
	var o memsim.Options
	for _, s := range splitList(c.String("memtable")) {
		k, err := memsim.ParseKind(s)
		if err != nil {
			return usageErr("--memtable: %v", err)
		}
		o.Kinds = append(o.Kinds, k)
	}
	for _, s := range splitList(c.String("allocation")) {
		t, err := memsim.ParseAllocType(s)
		if err != nil {
			return usageErr("--allocation: %v", err)
		}
		o.Types = append(o.Types, t)
	}
	if len(o.Kinds) == 0 || len(o.Types) == 0 {
		return usageErr("--memtable and --allocation need at least one value each")
	}
	o.JDK, o.Cassandra = c.Int("jdk"), c.String("cassandra")
	if o.JDK != 11 && o.JDK != 17 {
		return usageErr("--jdk %d: want 11 or 17", o.JDK)
	}
	if o.Cassandra != "4.1" && o.Cassandra != "5.0" {
		return usageErr("--cassandra %q: want 4.1 or 5.0", o.Cassandra)
	}
	o.Shards = c.Int("shards")
	if o.Shards < 1 || o.Shards > 1024 {
		return usageErr("--shards %d: want 1..1024", o.Shards)
	}
	switch strings.ToLower(c.String("partitioner")) {
	case "murmur3", "murmur3partitioner":
		o.Partitioner = memsim.Murmur3
	case "byteordered", "byteorderedpartitioner":
		o.Partitioner = memsim.ByteOrdered
	default:
		return usageErr("--partitioner %q: want murmur3 or byteordered", c.String("partitioner"))
	}
	if c.Int64("heap-space") < 0 || c.Int64("offheap-space") < 0 || c.Int64("heap-space") > 1<<30 || c.Int64("offheap-space") > 1<<30 {
		return usageErr("--heap-space and --offheap-space are MiB within 0..%d", 1<<30)
	}
	o.HeapSpace, o.OffheapSpace = c.Int64("heap-space")<<20, c.Int64("offheap-space")<<20
	o.CleanupThreshold = c.Float64("cleanup-threshold")
	if o.CleanupThreshold < 0.01 || o.CleanupThreshold > 0.99 {
		return usageErr("--cleanup-threshold %v: Cassandra accepts 0.01..0.99", o.CleanupThreshold)
	}
	o.MeasureGoHeap = c.Bool("go-heap")

	var open memsim.SourceFunc
	var keyCache *memsim.KeyCache
	title := ""
	if args := c.StringSlice("from-sstable"); len(args) > 0 {
		// Files or directories, as every command takes them.
		paths, err := format.FindSSTables(args, false)
		if err != nil {
			return cli.Exit("memsim: "+err.Error(), exitBadData)
		}
		if len(paths) == 0 {
			return usageErr("--from-sstable: no sstables found under %v", args)
		}
		src, part, err := memsim.SSTableSource(paths)
		if err != nil {
			return cli.Exit("memsim: "+err.Error(), exitBadData)
		}
		open, o.Partitioner = src, part
		kc, err := memsim.KeyCacheFootprint(paths, o.JDK, o.Cassandra)
		if err != nil {
			return cli.Exit("memsim: "+err.Error(), exitBadData)
		}
		keyCache = &kc
		title = "memsim --from-sstable " + strings.Join(paths, " ")
	} else {
		p, err := workload.LoadProfile(c.String("profile"))
		if err != nil {
			return usageErr("%v", err)
		}
		ops := c.Int64("ops")
		if ops < -1 {
			return usageErr("--ops %d: want >= 0", ops)
		}
		if c.IsSet("seed") {
			p.Seed = c.Uint64("seed")
		}
		if n := c.Int64("partitions"); n > 0 {
			p.Partitions = n
		} else if n < 0 {
			return usageErr("--partitions %d: want > 0", n)
		} else if ops > p.Partitions && p.PartitionOrder == "sequential" && p.RowsPerPartition == "1" {
			// small-partitions style profiles write op i to partition i.
			p.Partitions = ops
		}
		if err := p.Validate(); err != nil {
			return usageErr("%v", err)
		}
		open = memsim.GeneratorSource(p, ops)
		n := ops
		if n < 0 {
			n = p.Ops
		}
		title = fmt.Sprintf("memsim --profile %s --ops %d", p.Name, n)
	}
	if c.Bool("progress") {
		o.Progress = func(done, total int64) {
			if total > 0 {
				fmt.Fprintf(os.Stderr, "\rreplaying: %5.1f%% of %d ops ", 100*float64(done)/float64(total), total)
			} else {
				fmt.Fprintf(os.Stderr, "\rreplaying: %d ops ", done)
			}
		}
		defer fmt.Fprintln(os.Stderr)
	}
	rs, err := memsim.Replay(open, o)
	if err != nil {
		return cli.Exit("memsim: "+err.Error(), exitBadData)
	}
	if f := c.String("svg"); f != "" {
		if err := writeFile(f, func(w io.Writer) error { return memsim.WriteSVG(w, rs, title) }); err != nil {
			return cli.Exit("memsim: "+err.Error(), exitBadData)
		}
	}
	if f := c.String("html"); f != "" {
		if err := writeFile(f, func(w io.Writer) error { return memsim.WriteHTML(w, rs, title) }); err != nil {
			return cli.Exit("memsim: "+err.Error(), exitBadData)
		}
	}
	w := c.App.Writer
	if c.Bool("json") {
		for i := range rs {
			rs[i].Samples = nil // the chart data is for --svg/--html
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Results  []memsim.Result  `json:"results"`
			KeyCache *memsim.KeyCache `json:"key_cache,omitempty"`
		}{rs, keyCache})
	}
	if err := memsim.WriteTable(w, rs); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := memsim.WriteReads(w, rs); err != nil {
		return err
	}
	writeBars(w, rs)
	if keyCache != nil {
		fmt.Fprintf(w, "\nkey cache (CASSANDRA-9738), %d entries (%d with a promoted index, %d of them held with their IndexInfos):\n"+
			"  on heap %s (%.1f B/entry), off heap serialized %s (%.1f B/entry, of which %d B is the OHC library's entry header, not Cassandra's)\n",
			keyCache.Entries, keyCache.Indexed, keyCache.IndexedOnHeap, memsim.HumanBytes(keyCache.OnHeap), keyCache.OnHeapPerEntry,
			memsim.HumanBytes(keyCache.OffHeap), keyCache.OffHeapPerEntry, keyCache.OHCEntryHeader)
	}
	return nil
}

// writeBars draws each result's final footprint as a bar and its growth
// over the replay as a sparkline.
func writeBars(w io.Writer, rs []memsim.Result) {
	var maxTotal int64
	for _, r := range rs {
		maxTotal = max(maxTotal, r.OnHeap+r.OffHeap)
	}
	if maxTotal == 0 {
		return
	}
	on := lipgloss.NewStyle().Foreground(lipgloss.Color("4"))
	off := lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	label := lipgloss.NewStyle().Width(36)
	const width = 40
	fmt.Fprintln(w, "footprint (on heap ", on.Render("█"), " off heap ", off.Render("█"), ") and growth over the replay:")
	for _, r := range rs {
		a := int(float64(r.OnHeap) / float64(maxTotal) * width)
		b := int(float64(r.OffHeap) / float64(maxTotal) * width)
		var vals []int64
		for _, p := range r.Samples {
			vals = append(vals, p.OnHeap+p.OffHeap)
		}
		fmt.Fprintf(w, "%s %s%s%s %s\n", label.Render(r.Memtable+" "+r.Allocation),
			on.Render(strings.Repeat("█", a)), off.Render(strings.Repeat("█", b)),
			strings.Repeat(" ", max(0, width-a-b)), memsim.Sparkline(vals, maxTotal))
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func writeFile(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
