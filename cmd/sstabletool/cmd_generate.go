package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// generateCommand is the generate command.
func generateCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "generate",
		Usage:     "write a synthetic sstable, or a table's flush history of several, from a workload profile (docs/workload.md)",
		ArgsUsage: "--format nb|nc|oa|da --out DIR [--profile FILE|NAME] [--sstables N]",
		Description: "Writes one sstable whose partitions, rows, values, deletions and TTLs follow the profile\n" +
			"(a YAML/JSON file, a cassandra-stress user profile, or a built-in name: demo (the default),\n" +
			strings.Join(workload.BuiltinNames(), ", ") + "). For a cassandra-stress profile --partitions counts partition\n" +
			"seeds, and the table is its table_definition (docs/workload.md).\n" +
			"The mix's weights become shares of deleted partitions, rows, cells and range tombstones\n" +
			"(docs/writer.md). Deterministic for a given --seed.\n\n" +
			"--sstables N writes one table's flush history instead: N sstables (generations 1..N), one per day,\n" +
			"with overlapping keys: later ones overwrite cells with newer timestamps, delete partitions, rows,\n" +
			"ranges, cells and collection elements, rewrite cells with the very timestamp of their first\n" +
			"version (ties), and add TTLs, some of which have run out by the history's \"now\" (printed; pass it\n" +
			"to dump --merge --now). Its profiles: history (the default with --sstables), counters (counter\n" +
			"updates by three nodes, merged by shard), or any other.\n\n" +
			"--window D with --sstables N writes a TWCS-like history instead: sstable k holds only writes of time\n" +
			"window k (D long, from the profile's timestamp_start), every row with the TTL --ttl (default two\n" +
			"windows), nothing overwritten or deleted; its \"now\" is the end of the last window. --late-window K\n" +
			"adds sstable N+1: rows written late with the timestamps of window K and no TTL (a client's USING\n" +
			"TIMESTAMP, or a repair stream), which keeps expired windows from K on from being dropped: see\n" +
			"expired-blockers.\n\n" +
			"Examples:\n" +
			"  sstabletool generate --out /tmp/gen --partitions 300                                            # the demo profile, as oa\n" +
			"  sstabletool generate --format nc --profile wide-partitions --partitions 20 --out /tmp/wide\n" +
			"  sstabletool generate --format da --profile wide-partitions --partitions 20 --out /tmp/wide-bti   # trie-indexed\n" +
			"  sstabletool generate --out /tmp/ts --profile time-series-ttl --seed 7 --partitions 200 --json\n" +
			"  sstabletool generate --out /tmp/orders --profile orders-stress.yaml --partitions 40                # a cassandra-stress profile\n" +
			"  sstabletool generate --sstables 4 --out /tmp/hist                                               # a history; then dump --merge /tmp/hist\n" +
			"  sstabletool generate --sstables 3 --profile counters --out /tmp/counters\n" +
			"  sstabletool generate --sstables 5 --window 1h --ttl 2h --late-window 2 --out /tmp/twcs           # then expired-blockers /tmp/twcs",
		Flags: []cli.Flag{
			versionFlag(&cli.StringFlag{Name: "format", Value: "oa", Usage: "sstable version: nb, nc, oa (any of ma..oa), or da (BTI: Partitions.db and Rows.db in place of Index.db and Summary.db)"}),
			&cli.StringFlag{Name: "out", Usage: "output data `DIR`", Required: true},
			oneOf(&cli.StringFlag{Name: "profile", TakesFile: true, Usage: "workload profile file or built-in name (default: demo)"}, generateProfileNames()...),
			&cli.Uint64Flag{Name: "seed", Usage: "override the profile's seed"},
			&cli.Int64Flag{Name: "partitions", Usage: "override the profile's partition count"},
			compressionFlag(&cli.StringFlag{Name: "compression", Value: "LZ4Compressor", Usage: "none, or a compressor (LZ4Compressor, SnappyCompressor, DeflateCompressor, ZstdCompressor)"}),
			&cli.IntFlag{Name: "chunk-length", Usage: "chunk length in KiB (default 16)"},
			&cli.IntFlag{Name: "column-index-size", Usage: "index block size in KiB (column_index_size; default 64 for big format, 16 for da)"},
			&cli.IntFlag{Name: "sstables", Usage: "write a flush history of `N` sstables of one table (see above)"},
			&cli.DurationFlag{Name: "window", Usage: "with --sstables: a TWCS-like history of time windows `D` long (1h, 24h)"},
			&cli.DurationFlag{Name: "ttl", Usage: "with --window: every write's TTL `D` (default: two windows)"},
			&cli.IntFlag{Name: "late-window", Usage: "with --window: one more sstable, of rows written late with window `K`'s timestamps and no TTL (1..N)"},
			jsonFlag,
		},
		Action: generateAction,
	}, noArgs.withRequired("out"))
}

// generateProfiles are generate's built-in profiles, by name.
var generateProfiles = map[string]string{"demo": generate.DemoProfile, "history": generate.HistoryProfile, "counters": generate.CounterHistoryProfile}

func generateProfileNames() []string { return slices.Sorted(maps.Keys(generateProfiles)) }

func generateAction(c *cli.Context) error {
	v, err := parseAnyVersion(c.String("format"))
	if err != nil {
		return usageError("--format: %v", err)
	}
	n := c.Int("sstables")
	if c.IsSet("sstables") && n < 1 {
		return usageError("--sstables %d: a history has at least 1 sstable", n)
	}
	var p *workload.Profile
	name := c.String("profile")
	if name == "" && n > 0 {
		name = "history"
	}
	switch builtin := generateProfiles[name]; {
	case name == "":
		p, err = workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	case builtin != "":
		p, err = workload.ParseProfile([]byte(builtin), name)
	default:
		p, err = workload.LoadProfile(name)
	}
	if err != nil {
		return badData(err)
	}
	if n := c.Int64("partitions"); n > 0 {
		p.Partitions = n
	}
	o := generate.Options{Version: v, Seed: c.Uint64("seed"), ColumnIndexSize: c.Int("column-index-size") << 10}
	if !c.IsSet("compression") && c.IsSet("chunk-length") {
		c.Set("compression", "LZ4Compressor")
	}
	comp, none, err := parseCompression(c)
	if err != nil {
		return err
	}
	o.Compression, o.Uncompressed = comp, none
	if n > 0 {
		return generateHistory(c, p, o, n)
	}
	for _, f := range []string{"window", "ttl", "late-window"} {
		if c.IsSet(f) {
			return usageError("--%s works with --sstables N (a history)", f)
		}
	}
	prog := newProgress("generate", p.Partitions)
	prog.unit = "partitions"
	o.Progress = func(done, total int64) { prog.total = total; prog.update(done) }
	res, err := generate.Generate(p, c.String("out"), o)
	prog.done()
	if err != nil {
		return badData(err)
	}
	if c.Bool("json") {
		out := map[string]any{"data_path": res.DataPath, "version": v.Name, "profile": p.Name,
			"partitions": res.Partitions, "rows": res.Rows, "uncompressed_bytes": res.DataBytes}
		if st := p.Stress; st != nil {
			out["table"], out["profile_format"], out["partition_seeds"], out["ignored_fields"] = st.QualifiedName(), "cassandra-stress", p.Partitions, st.Ignored
		}
		return writeJSON(out)
	}
	for _, n := range res.Recovered {
		fmt.Fprintf(stdout, "recovered: %s\n", n)
	}
	if st := p.Stress; st != nil {
		fmt.Fprintf(stdout, "wrote %s (%s, %d partitions of %d seeds, %d rows, table %s of cassandra-stress profile %s)\n",
			res.DataPath, v.Name, res.Partitions, p.Partitions, res.Rows, st.QualifiedName(), c.String("profile"))
		return nil
	}
	fmt.Fprintf(stdout, "wrote %s (%s, %d partitions, %d rows, profile %s)\n", res.DataPath, v.Name, res.Partitions, res.Rows, p.Name)
	return nil
}

// generateHistory is generate --sstables N.
func generateHistory(c *cli.Context, p *workload.Profile, o generate.Options, n int) error {
	prog := newProgress("generate", p.Partitions*int64(n))
	prog.unit = "partition versions"
	o.Progress = func(done, total int64) { prog.total = total; prog.update(done) }
	ho := generate.HistoryOptions{Options: o, SSTables: n}
	win, ttl := c.Duration("window"), c.Duration("ttl")
	switch {
	case c.IsSet("window") && (win < time.Second || win%time.Second != 0):
		return usageError("--window %v: give a whole number of seconds, at least 1s", win)
	case (c.IsSet("ttl") || c.IsSet("late-window")) && !c.IsSet("window"):
		return usageError("--ttl and --late-window work with --window (a TWCS-like history)")
	case c.IsSet("ttl") && (ttl < time.Second || ttl%time.Second != 0):
		return usageError("--ttl %v: give a whole number of seconds, at least 1s", ttl)
	case c.IsSet("late-window") && (c.Int("late-window") < 1 || c.Int("late-window") > n):
		return usageError("--late-window %d: give one of the windows, 1 to %d", c.Int("late-window"), n)
	}
	ho.Window, ho.TTL, ho.LateWindow = int64(win/time.Second), int64(ttl/time.Second), c.Int("late-window")
	res, err := generate.GenerateHistory(p, c.String("out"), ho)
	prog.done()
	if err != nil {
		return badData(err)
	}
	if c.Bool("json") {
		return writeJSON(map[string]any{"data_paths": res.DataPaths, "version": o.Version.Name, "profile": p.Name,
			"partitions": res.Partitions, "rows": res.Rows, "now": res.Now})
	}
	for _, n := range res.Recovered {
		fmt.Fprintf(stdout, "recovered: %s\n", n)
	}
	for _, d := range res.DataPaths {
		fmt.Fprintf(stdout, "wrote %s\n", d)
	}
	if ho.Window > 0 {
		late := ""
		if ho.LateWindow > 0 {
			late = fmt.Sprintf(" and one of rows written late with window %d's timestamps, no TTL", ho.LateWindow)
		}
		if ttl == 0 {
			ttl = 2 * win
		}
		fmt.Fprintf(stdout, "a TWCS-like history of %d windows of %v, TTL %v%s (%s, profile %s): %d partitions, %d rows; its now is %d (%s)\n",
			n, win, ttl, late, o.Version.Name, p.Name, res.Partitions, res.Rows, res.Now, time.Unix(res.Now, 0).UTC().Format(time.RFC3339))
		return nil
	}
	fmt.Fprintf(stdout, "a history of %d sstables (%s, profile %s): %d partitions, %d row versions; its now is %d (%s)\n",
		len(res.DataPaths), o.Version.Name, p.Name, res.Partitions, res.Rows, res.Now, time.Unix(res.Now, 0).UTC().Format(time.RFC3339))
	return nil
}
