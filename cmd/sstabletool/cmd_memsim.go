package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/memview"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/memsim"
	"github.com/sstabletool/sstabletool/workload"
)

// memsimCommand is the memsim command.
func memsimCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "memsim",
		Usage:     "replay a workload into skip-list, trie and hash-ordered memtables and show their memory footprint",
		ArgsUsage: " ",
		Description: "memsim replays a workload profile (built-in: " + strings.Join(workload.BuiltinNames(), ", ") + ",\n" +
			"a YAML/JSON file, or a cassandra-stress user profile with your table_definition and columnspec,\n" +
			"see docs/workload.md) into Go memtables built like Cassandra's and prints,\n" +
			"per memtable and memtable_allocation_type, the bytes Cassandra would account on and off heap,\n" +
			"per partition against the live data, and how many flushes per million writes that makes.\n" +
			"Defaults model JDK 11 and Cassandra before CASSANDRA-14227 (--cassandra 4.1), the conditions of\n" +
			"the published ReadSmallPartitionsBench figures. --bench compares their speed instead.\n\n" +
			"Examples:\n" +
			"  sstabletool memsim --ops 20000 --svg /tmp/memsim.svg              # the picture (also --html, --tui)\n" +
			"  sstabletool memsim --from-sstable .                               # replay this table's own data\n" +
			"  sstabletool memsim --profile orders-stress.yaml --ops 100000      # your table's cassandra-stress profile\n" +
			"  sstabletool memsim --bench --ops 20000 --json > bench.json       # speed, each memtable alone",
		Flags: []cli.Flag{
			oneOf(&cli.StringFlag{Name: "profile", Value: "small-partitions", TakesFile: true, Usage: "built-in profile name or profile file"}, workload.BuiltinNames()...),
			&cli.Int64Flag{Name: "ops", Value: -1, Usage: "operations to replay (default: the profile's)"},
			&cli.Int64Flag{Name: "partitions", Usage: "override the profile's partition count (default: max(profile's, --ops) for sequential profiles)"},
			&cli.Uint64Flag{Name: "seed", Usage: "override the profile's seed"},
			&cli.StringSliceFlag{Name: "from-sstable", TakesFile: true, Usage: "replay every partition, row and cell of these sstables (files or directories of one table) instead of a profile"},
			listOf(&cli.StringFlag{Name: "memtable", Value: "skiplist,trie,hashordered", Usage: "comma-separated memtables"},
				names(memsim.Kinds)...).parsedBy(eachOf(memsim.ParseKind)),
			listOf(&cli.StringFlag{Name: "allocation", Value: "unslabbed_heap_buffers,heap_buffers,offheap_buffers,offheap_objects", Usage: "comma-separated memtable_allocation_type values"},
				names(memsim.AllocTypes)...).parsedBy(eachOf(memsim.ParseAllocType)),
			oneOf(&cli.IntFlag{Name: "jdk", Value: 11, Usage: "JVM: 11 or 17 (a heap ByteBuffer is 48 or 56 bytes)"}, "11", "17"),
			oneOf(&cli.StringFlag{Name: "cassandra", Value: "4.1", Usage: "4.1 (before CASSANDRA-14227) or 5.0 (BTreeRow 8 bytes larger)"}, "4.1", "5.0"),
			&cli.IntFlag{Name: "shards", Value: runtime.NumCPU(), DefaultText: "the number of cores", Usage: "TrieMemtable shards (Cassandra's default is the core count)"},
			oneOf(&cli.StringFlag{Name: "partitioner", Value: "murmur3", Usage: "murmur3 or byteordered"},
				"murmur3", "byteordered").parsedBy(func(s string) error { _, err := memsimPartitioner(s); return err }),
			&cli.Int64Flag{Name: "heap-space", Value: 2048, Usage: "memtable_heap_space in MiB"},
			&cli.Int64Flag{Name: "offheap-space", Value: 2048, Usage: "memtable_offheap_space in MiB"},
			&cli.Float64Flag{Name: "cleanup-threshold", Value: 1.0 / 3, Usage: "memtable_cleanup_threshold (default 1/(1+memtable_flush_writers) with 2 writers)"},
			&cli.BoolFlag{Name: "json", Usage: `print {"settings": {...}, "results": [...]} as JSON (browse FILE.json shows it again)`},
			&cli.StringFlag{Name: "svg", TakesFile: true, Usage: "write the picture (bytes per partition, flushes, growth curve) to this SVG file"},
			&cli.StringFlag{Name: "html", TakesFile: true, Usage: "write the picture and the tables to this HTML file"},
			&cli.StringFlag{Name: "load", TakesFile: true, Usage: "show a result saved with --json again (text, --svg, --html, --tui) instead of running"},
			&cli.BoolFlag{Name: "tui", Usage: "show the results in the terminal (picture, table, speed, settings)"},
			&cli.BoolFlag{Name: "bench", Usage: "compare speed instead: each memtable alone on the same ops, warm-up, --bench-runs runs, write-only and mixed, 1 and all cores"},
			&cli.IntFlag{Name: "bench-runs", Value: 5, Usage: "timed runs per memtable and case with --bench (after one warm-up)"},
			&cli.Float64Flag{Name: "read-fraction", Value: 0.5, Usage: "share of reads in --bench's mixed case"},
			&cli.StringFlag{Name: "writers", Usage: "comma-separated writer counts for --bench (default 1 and the core count)"},
			&cli.BoolFlag{Name: "progress", Usage: "show progress on stderr (default: when stderr is a terminal; --progress=false to hide)"},
			// Kept so that scripts passing it still run: the memtables now
			// share one replay, so there is nothing to run in parallel.
			&cli.IntFlag{Name: "parallel", Hidden: true, Usage: "no effect (the memtables share one replay)"},
			&cli.BoolFlag{Name: "go-heap", Usage: "measure the Go heap each memtable holds (runs the garbage collector)"},
		},
		Action: runMemsim,
	}, noArgs)
}

func runMemsim(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usageError("memsim: unexpected argument %q (use --profile or --from-sstable)", c.Args().First())
	}
	if f := c.String("load"); f != "" {
		rep, ok, err := memview.Load(f)
		if err != nil {
			return badData(fmt.Errorf("memsim: %w", err))
		}
		if !ok {
			return usageError("memsim: --load %s: not a memsim --json result", f)
		}
		return showReport(c, rep, savedTitle(rep, f))
	}
	var o memsim.Options
	set := memsim.Settings{ToolVersion: readBuildInfo().short()}
	for _, s := range splitList(c.String("memtable")) {
		k, err := memsim.ParseKind(s)
		if err != nil {
			return usageError("memsim: --memtable: %v", err)
		}
		if slices.Contains(o.Kinds, k) {
			return usageError("memsim: --memtable: %s given twice", k)
		}
		o.Kinds = append(o.Kinds, k)
		set.Memtables = append(set.Memtables, k.String())
	}
	for _, s := range splitList(c.String("allocation")) {
		t, err := memsim.ParseAllocType(s)
		if err != nil {
			return usageError("memsim: --allocation: %v", err)
		}
		o.Types = append(o.Types, t)
		set.Allocations = append(set.Allocations, t.String())
	}
	if len(o.Kinds) == 0 || len(o.Types) == 0 {
		return usageError("memsim: --memtable and --allocation need at least one value each")
	}
	o.JDK, o.Cassandra = c.Int("jdk"), c.String("cassandra") // the flags checked them
	o.Shards = c.Int("shards")
	if o.Shards < 1 || o.Shards > 1024 {
		return usageError("memsim: --shards %d: want 1..1024", o.Shards)
	}
	part, err := memsimPartitioner(c.String("partitioner"))
	if err != nil {
		return usageError("memsim: --partitioner %v", err)
	}
	o.Partitioner = part
	if c.Int64("heap-space") < 0 || c.Int64("offheap-space") < 0 || c.Int64("heap-space") > 1<<30 || c.Int64("offheap-space") > 1<<30 {
		return usageError("memsim: --heap-space and --offheap-space are MiB within 0..%d", 1<<30)
	}
	o.HeapSpace, o.OffheapSpace = c.Int64("heap-space")<<20, c.Int64("offheap-space")<<20
	o.CleanupThreshold = c.Float64("cleanup-threshold")
	if o.CleanupThreshold < 0.01 || o.CleanupThreshold > 0.99 {
		return usageError("memsim: --cleanup-threshold %v: Cassandra accepts 0.01..0.99", o.CleanupThreshold)
	}
	o.MeasureGoHeap = c.Bool("go-heap")
	bench := c.Bool("bench")
	bo := memsim.BenchOptions{Kinds: o.Kinds, JDK: o.JDK, Cassandra: o.Cassandra, Shards: o.Shards,
		Runs: c.Int("bench-runs"), ReadFraction: c.Float64("read-fraction")}
	if bench {
		if bo.Runs < 1 || bo.Runs > 1000 {
			return usageError("memsim: --bench-runs %d: want 1..1000", bo.Runs)
		}
		if bo.ReadFraction <= 0 || bo.ReadFraction >= 1 {
			return usageError("memsim: --read-fraction %v: want above 0 and below 1", bo.ReadFraction)
		}
		for _, s := range splitList(c.String("writers")) {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 256 {
				return usageError("memsim: --writers %q: want counts within 1..256", s)
			}
			bo.Writers = append(bo.Writers, n)
		}
	}

	var open memsim.SourceFunc
	var keyCache *memsim.KeyCache
	title := ""
	if paths := c.StringSlice("from-sstable"); len(paths) > 0 {
		// Resolved like every other command's paths: a component or a
		// directory names its sstable, and a FIFO or device is refused.
		var resolved []string
		for _, f := range format.Find(paths, format.FindOptions{}).SSTables {
			if f.Err != nil {
				return cli.Exit("memsim: --from-sstable "+f.Err.Error(), exitBadData)
			}
			resolved = append(resolved, f.Path)
		}
		paths = resolved
		if len(paths) == 0 {
			return usageError("memsim: --from-sstable: no sstables found under %v", c.StringSlice("from-sstable"))
		}
		src, part, err := memsim.SSTableSource(paths)
		if err != nil {
			return badData(fmt.Errorf("memsim: %w", err))
		}
		open, o.Partitioner = src, part
		if !bench {
			kc, err := memsim.KeyCacheFootprint(paths, o.JDK, o.Cassandra)
			if err != nil {
				return badData(fmt.Errorf("memsim: %w", err))
			}
			keyCache = &kc
		}
		set.Source, set.SSTables = "sstables", paths
		title = fmt.Sprintf("memsim: %s of %s", words.Plural(len(paths), "sstable"), filepath.Base(filepath.Dir(paths[0])))
	} else {
		p, err := workload.LoadProfile(c.String("profile"))
		if err != nil {
			return usageError("memsim: %v", err)
		}
		ops := c.Int64("ops")
		if ops < -1 {
			return usageError("memsim: --ops %d: want >= 0", ops)
		}
		if ops < 0 && bench {
			// Each memtable replays the ops (1 + --bench-runs) times in
			// four cases: keep the default short.
			ops = min(p.Ops, 200000)
		}
		if c.IsSet("seed") {
			p.Seed = c.Uint64("seed")
		}
		if n := c.Int64("partitions"); n > 0 {
			p.Partitions = n
		} else if n < 0 {
			return usageError("memsim: --partitions %d: want > 0", n)
		} else if ops > p.Partitions && p.PartitionOrder == "sequential" && p.RowsPerPartition == "1" {
			// small-partitions style profiles write op i to partition i.
			p.Partitions = ops
		}
		if err := p.Validate(); err != nil {
			return usageError("memsim: %v", err)
		}
		open = memsim.GeneratorSource(p, ops)
		n := ops
		if n < 0 {
			n = p.Ops
		}
		set.Source, set.Profile, set.Ops, set.Seed, set.Partitions = "profile", p.Name, n, p.Seed, p.Partitions
		title = fmt.Sprintf("memsim --profile %s --ops %s", p.Name, memsim.Count(n))
		if _, builtin := workload.Builtin(c.String("profile")); !builtin {
			set.ProfileFile = c.String("profile")
		}
		if st := p.Stress; st != nil {
			set.ProfileFormat, set.Table, set.IgnoredFields = "cassandra-stress", st.QualifiedName(), st.Ignored
			title = fmt.Sprintf("memsim: table %s, cassandra-stress profile %s, %s ops", st.QualifiedName(), set.ProfileFile, memsim.Count(n))
		}
	}
	set.Partitioner = o.Partitioner.String()
	set.JDK, set.Cassandra, set.Shards = o.JDK, o.Cassandra, o.Shards
	set.HeapSpace, set.OffheapSpace, set.CleanupThreshold = o.HeapSpace, o.OffheapSpace, o.CleanupThreshold
	bo.Partitioner = o.Partitioner
	rep := &memsim.Report{Settings: set, KeyCache: keyCache}
	if bench {
		title = strings.Replace(title, "memsim", "memsim --bench", 1)
		// --bench holds its ops in memory: an sstable's are capped.
		limit := int64(-1)
		if set.Source == "sstables" {
			if limit = c.Int64("ops"); limit < 0 {
				limit = 1_000_000
				fmt.Fprintln(stderr, "memsim --bench: timing the sstables' first 1,000,000 writes (--ops to change)")
			}
		}
		br, err := runBench(open, bo, progressFlag(c, newProgress("memsim --bench", 0)), limit)
		if err != nil {
			return badData(fmt.Errorf("memsim: %w", err))
		}
		rep.Bench = br
		rep.Settings.Allocations = nil // speed does not depend on them
	} else {
		prog := progressFlag(c, newProgress("memsim: replaying", 0))
		prog.unit = "ops"
		o.Progress = func(done, total int64) { prog.total = total; prog.update(done) }
		rs, err := memsim.Replay(open, o)
		prog.done()
		if err != nil {
			return badData(fmt.Errorf("memsim: %w", err))
		}
		rep.Results = rs
		if set.Source == "sstables" && len(rs) > 0 {
			rep.Settings.Ops = rs[0].Ops
		}
	}
	return showReport(c, rep, title)
}

// runBench collects the source's writes (at most limit, -1 for all) and
// times the memtables on them.
func runBench(open memsim.SourceFunc, bo memsim.BenchOptions, prog *progress, limit int64) (*memsim.BenchReport, error) {
	src, _, err := open()
	if err != nil {
		return nil, err
	}
	if cl, ok := src.(io.Closer); ok {
		defer cl.Close()
	}
	writes, err := memsim.CollectWrites(src, limit)
	if err != nil {
		return nil, err
	}
	prog.unit = "runs"
	bo.Progress = func(done, total int) { prog.total = int64(total); prog.update(int64(done)) }
	defer prog.done()
	return memsim.RunBench(writes, src.Schema(), bo)
}

// showReport writes a report as JSON, SVG, HTML, text or in the terminal.
func showReport(c *cli.Context, rep *memsim.Report, title string) error {
	pic := memsim.NewPicture(rep, title)
	if f := c.String("svg"); f != "" && len(rep.Results) > 0 {
		if err := writeFile(f, func(w io.Writer) error { return memsim.WriteSVG(w, pic) }); err != nil {
			return badData(fmt.Errorf("memsim: %w", err))
		}
	}
	if f := c.String("html"); f != "" {
		if err := writeFile(f, func(w io.Writer) error { return memsim.WriteHTML(w, rep, pic) }); err != nil {
			return badData(fmt.Errorf("memsim: %w", err))
		}
	}
	w := c.App.Writer
	if c.Bool("json") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if c.Bool("tui") {
		if !isatty.IsTerminal(os.Stdout.Fd()) {
			return usageError("memsim: --tui needs a terminal; use --json, --svg or --html when piping")
		}
		return memview.Run(rep, title)
	}
	return writeText(w, rep, pic)
}

// writeText prints the tables and the picture; colour only on a terminal
// that wants it (none with NO_COLOR or when piped), and
// the picture's glyphs differ so it reads the same without.
func writeText(w io.Writer, rep *memsim.Report, pic *memsim.Picture) error {
	if rep.Bench != nil {
		if err := memsim.WriteBench(w, rep.Bench); err != nil {
			return err
		}
	}
	if len(rep.Results) == 0 {
		return nil
	}
	if s := &rep.Settings; s.Table != "" {
		fmt.Fprintf(w, "table %s from the %s profile %s (one op is one row's write)\n", s.Table, s.ProfileFormat, s.ProfileFile)
		if len(s.IgnoredFields) > 0 {
			fmt.Fprintf(w, "ignored (no effect on the memtables): %s\n", strings.Join(s.IgnoredFields, ", "))
		}
		fmt.Fprintln(w)
	}
	if err := memsim.WriteTable(w, rep.Results); err != nil {
		return err
	}
	fmt.Fprintf(w, "(replay %.2f s for all memtables together; \"map s\" is each one's partition map: compare speed with --bench)\n\n", rep.Results[0].Seconds)
	if err := memsim.WriteReads(w, rep.Results); err != nil {
		return err
	}
	var opts memsim.TextOptions
	if theme.Detect(w) > colorprofile.ASCII {
		st := func(s lipgloss.Style) func(string) string { return func(x string) string { return s.Render(x) } }
		opts.On = st(lipgloss.NewStyle().Foreground(lipgloss.Color("4")))
		opts.Off = st(lipgloss.NewStyle().Foreground(lipgloss.Color("3")))
		opts.Dim = st(lipgloss.NewStyle().Faint(true))
	}
	io.WriteString(w, pic.Text(opts))
	if kc := rep.KeyCache; kc != nil {
		fmt.Fprintf(w, "\nkey cache (CASSANDRA-9738), %d entries (%d with a promoted index, %d of them held with their IndexInfos):\n"+
			"  on heap %s (%.1f B/entry), off heap serialized %s (%.1f B/entry, of which %d B is the OHC library's entry header, not Cassandra's)\n",
			kc.Entries, kc.Indexed, kc.IndexedOnHeap, words.PrettyMemory(kc.OnHeap, ""), kc.OnHeapPerEntry,
			words.PrettyMemory(kc.OffHeap, ""), kc.OffHeapPerEntry, kc.OHCEntryHeader)
	}
	return nil
}

// runMemview shows a saved memsim --json result (browse FILE.json). ok is
// false when the file is not one.
func runMemview(path string) (ok bool, err error) {
	rep, ok, err := memview.Load(path)
	if err != nil || !ok {
		return ok, err
	}
	if !isatty.IsTerminal(os.Stdout.Fd()) {
		return true, usageError("memsim: browse needs a terminal")
	}
	return true, memview.Run(rep, savedTitle(rep, path))
}

// savedTitle names a saved result after the run that made it.
func savedTitle(rep *memsim.Report, path string) string {
	s := &rep.Settings
	t := "memsim: " + filepath.Base(path)
	if s.Source == "profile" && s.Profile != "" {
		t = fmt.Sprintf("memsim --profile %s --ops %s", s.Profile, memsim.Count(s.Ops))
	}
	if s.Source == "profile" && s.Table != "" {
		t = fmt.Sprintf("memsim: table %s, %s profile %s, %s ops", s.Table, s.ProfileFormat, s.ProfileFile, memsim.Count(s.Ops))
	}
	if rep.Bench != nil && len(rep.Results) == 0 {
		t = strings.Replace(t, "memsim", "memsim --bench", 1)
	}
	return t
}

// memsimPartitioner is the partitioner --partitioner names.
func memsimPartitioner(s string) (memsim.Partitioner, error) {
	switch strings.ToLower(s) {
	case "murmur3", "murmur3partitioner":
		return memsim.Murmur3, nil
	case "byteordered", "byteorderedpartitioner":
		return memsim.ByteOrdered, nil
	}
	return 0, fmt.Errorf("%q: want murmur3 or byteordered", s)
}

// eachOf checks each value of a comma-separated list with parse.
func eachOf[T any](parse func(string) (T, error)) func(string) error {
	return func(s string) error {
		for _, v := range splitList(s) {
			if _, err := parse(v); err != nil {
				return err
			}
		}
		return nil
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
