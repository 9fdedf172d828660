package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/expired"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/merge"
)

// expiredBlockersCommand is the expired-blockers command.
func expiredBlockersCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "expired-blockers",
		Usage:     "why fully expired sstables are not dropped: what blocks each, and what removing a blocker would free (sstableexpiredblockers, without a JVM)",
		ArgsUsage: "TABLE_DIR|SSTABLE... | --data DIR KEYSPACE TABLE",
		Description: "An sstable whose newest deletion or expiry (its maximum local deletion time) is before gcBefore =\n" +
			"now - gc_grace_seconds is fully expired: compaction deletes it whole, unless a live sstable holds data as\n" +
			"old as its newest (a minimum timestamp at or below its maximum timestamp), whose resurrection its\n" +
			"tombstones might be keeping down. That sstable blocks it: CompactionController.getFullyExpiredSSTables,\n" +
			"as TimeWindowCompactionStrategy calls it with every sstable of the table. A classic blocker under TWCS\n" +
			"is an sstable of writes with old client timestamps (USING TIMESTAMP), or of data a repair streamed in.\n\n" +
			"It prints sstableexpiredblockers's lines, one per blocker (\"[<reader>(path='...') (minTS = ..., maxTS = ...,\n" +
			"maxLDT = ...)],  blocks N expired sstables from getting dropped: [...], [...], \" and a blank line), then\n" +
			"what sstabletool adds: every fully expired sstable, droppable or blocked and by which; the bytes each\n" +
			"blocker holds back; and the one sstable whose removal (or a compaction that drops its oldest data) would\n" +
			"let the most bytes go, with what it would free: an expired sstable blocked by two is freed by neither\n" +
			"alone. --json gives the same.\n\n" +
			"gc_grace_seconds comes from --gc-grace, else from the table's schema: --schema (cqlsh DESCRIBE output),\n" +
			"--schema-from DIR, or the system_schema of the data directory the table lies in (<data>/<keyspace>/\n" +
			"<table>-<id>/, as every command reads it); else Cassandra's default, 864000 (said on stderr). --now\n" +
			"(epoch seconds or RFC 3339) asks as of another time. The sstables of one table may be in several\n" +
			"directories (--data once per data directory); each table is analyzed on its own. Nothing is changed.\n\n" +
			"Exit codes: 0 no expired sstable is blocked, 1 some are, 2 unreadable sstables or bad usage.\n\n" +
			"Examples:\n" +
			"  sstabletool expired-blockers /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2 --gc-grace 0\n" +
			"  sstabletool expired-blockers --data /var/lib/cassandra/data shop orders --schema shop.cql --json\n" +
			"  sstabletool expired-blockers -r /var/lib/cassandra/data/shop --now 2030-01-01T00:00:00Z --gc-grace 3600   # every table, as of a later time\n" +
			"  sstabletool generate --sstables 5 --window 1h --ttl 2h --late-window 2 --out /tmp/twcs-history   # a TWCS history to try it on:\n" +
			"  sstabletool expired-blockers /tmp/twcs-history --now 2024-01-01T05:00:00Z --gc-grace 0     # its now, from generate's output; exit 1: blocked",
		Flags: []cli.Flag{
			&cli.Int64Flag{Name: "gc-grace", DefaultText: "the table's, from its schema, else 864000", Usage: "the table's gc_grace_seconds, `SECONDS`"},
			&cli.StringFlag{Name: "now", DefaultText: "the current time", Usage: "as of time `T`: epoch seconds or RFC 3339"},
			dataFlag, recursiveFlag, schemaFlag, tableFlag, jsonFlag,
		},
		Action: expiredBlockersAction,
	}, argSpec{min: 1, max: -1, what: "table directory or sstable"})
}

// expiredJSON is one table's answer in --json.
type expiredJSON struct {
	Table        string         `json:"table"`
	Now          int64          `json:"now"`
	GCGrace      int64          `json:"gc_grace_seconds"`
	GCGraceFrom  string         `json:"gc_grace_from"`
	GCBefore     int64          `json:"gc_before"`
	SSTables     int            `json:"sstables"`
	MinLive      *int64         `json:"min_live_timestamp"` // null when nothing is live
	Expired      []expiredEntry `json:"expired"`
	Blockers     []blockerEntry `json:"blockers"`
	Best         *blockerEntry  `json:"best"` // null when no blocker alone frees anything
	Droppable    int64          `json:"droppable_bytes"`
	BlockedBytes int64          `json:"blocked_bytes"`
}

type expiredEntry struct {
	SSTable              string   `json:"sstable"`
	Bytes                int64    `json:"bytes"`
	MinTimestamp         int64    `json:"min_timestamp"`
	MaxTimestamp         int64    `json:"max_timestamp"`
	MaxLocalDeletionTime int64    `json:"max_local_deletion_time"`
	Droppable            bool     `json:"droppable"`
	BlockedBy            []string `json:"blocked_by"`
}

type blockerEntry struct {
	SSTable        string   `json:"sstable"`
	Bytes          int64    `json:"bytes"`
	MinTimestamp   int64    `json:"min_timestamp"`
	Blocks         []string `json:"blocks"`
	BlockedBytes   int64    `json:"blocked_bytes"`
	Unblocks       []string `json:"unblocks_alone"`
	UnblockedBytes int64    `json:"unblocked_bytes_alone"`
}

func expiredBlockersAction(c *cli.Context) error {
	now, err := parseNow(c)
	if err != nil {
		return err
	}
	if c.IsSet("gc-grace") && c.Int64("gc-grace") < 0 {
		return usageError("expired-blockers: --gc-grace %d: must not be negative", c.Int64("gc-grace"))
	}
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	paths, err := tableTargets(c)
	if err != nil {
		return err
	}
	sc, err := findSSTablesIn(c, paths)
	if err != nil {
		return err
	}
	// One table per table directory name: <keyspace>/<table>-<id> in any
	// data directory; a directory named otherwise is a table of its own.
	var order []string
	groups := map[string][]string{}
	for _, f := range sc.found {
		if f.Err != nil {
			continue
		}
		key := filepath.Dir(f.Path)
		if t := format.TableOf(key); t.HasID() {
			key = t.Keyspace + "." + t.Table + "-" + t.ID
		} else if abs, err := filepath.Abs(key); err == nil {
			key = abs
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], f.Path)
	}
	js := c.Bool("json")
	var all []any
	blocked, printed := false, false
	sc.verb = "read"
	// Unreadable paths first, as every scan reports them.
	sc.each(func(string) error { return nil }, func(e sstableError) { all = append(all, e) })
	for _, key := range order {
		var ss []expired.SSTable
		for _, p := range groups[key] {
			s, err := expired.Load(p)
			if err != nil {
				e := sstableError{SSTable: p, Error: failureText(p, err)}
				sc.failed = append(sc.failed, e)
				fmt.Fprintln(stderr, "sstabletool:", e.Error)
				all = append(all, e)
				continue
			}
			ss = append(ss, s)
		}
		if len(ss) == 0 {
			continue
		}
		grace, from, err := gcGraceOf(c, sf, groups[key][0])
		if err != nil {
			return err
		}
		r := expired.Analyze(ss, now-grace)
		blocked = blocked || anyBlocked(r)
		name := key
		if t := format.TableOf(filepath.Dir(groups[key][0])); t.HasID() {
			name = t.Keyspace + "." + t.Table
		}
		if js {
			all = append(all, expiredReportJSON(name, now, grace, from, r))
			continue
		}
		if printed {
			fmt.Fprintln(stdout)
		}
		printExpired(name, now, grace, from, r)
		printed = true
	}
	if js {
		if all == nil {
			all = []any{}
		}
		if err := writeJSON(all); err != nil {
			return err
		}
	}
	if err := sc.err(); err != nil {
		return err
	}
	if blocked {
		return cli.Exit("", exitProblem)
	}
	return nil
}

func anyBlocked(r *expired.Report) bool {
	for _, e := range r.Expired {
		if !e.Droppable {
			return true
		}
	}
	return false
}

// gcGraceOf is the table's gc_grace_seconds and where it came from:
// --gc-grace; else the table's schema through the command's schema source
// (--schema FILE, --schema-from DIR, or the system_schema of the data
// directory the sstables lie in); else Cassandra's default, said on
// stderr.
func gcGraceOf(c *cli.Context, sf *inspect.SchemaSource, path string) (int64, string, error) {
	if c.IsSet("gc-grace") {
		return c.Int64("gc-grace"), "--gc-grace", nil
	}
	if sf != nil {
		s, err := sstable.Open(path, sstable.Options{})
		if err != nil {
			return 0, "", badData(err)
		}
		defer s.Close()
		ts, err := sf.Table(s)
		if err != nil {
			return 0, "", usageError("%v", err)
		}
		// A one-table schema file does not speak for another table's
		// directory (inspect.SchemaSource: ts is nil, and it said why).
		if ts != nil && ts.HasGCGrace {
			from := "--schema " + c.String("schema")
			if c.String("schema") == "" {
				_, from = sf.Describe(s, false) // the node's system_schema
			}
			return ts.GCGraceSeconds, from, nil
		}
	}
	fmt.Fprintf(stderr, "sstabletool: expired-blockers: %s: the table's gc_grace_seconds is not known: using Cassandra's default, %d (give --gc-grace, or --schema with DESCRIBE output)\n", filepath.Dir(path), merge.DefaultGCGraceSeconds)
	return merge.DefaultGCGraceSeconds, "default", nil
}

func printExpired(name string, now, grace int64, from string, r *expired.Report) {
	ss := r.SSTables
	// sstableexpiredblockers' lines: each blocker, then a blank line.
	for _, b := range r.Blockers {
		var blocked []string
		for _, ei := range b.Blocks {
			blocked = append(blocked, r.Expired[ei].Tracing()+", ")
		}
		// The Java formats each list of sstables with ", " after every
		// one, the blocker's too, and then " blocks": two spaces.
		fmt.Fprintf(stdout, "%s,  blocks %d expired sstables from getting dropped: %s\n\n", ss[b.Index].Tracing(), len(b.Blocks), strings.Join(blocked, ""))
	}
	at := func(s int64) string { return time.Unix(s, 0).UTC().Format(time.RFC3339) }
	fmt.Fprintf(stdout, "%s: gcBefore %d (%s) = now %d (%s) - gc_grace_seconds %d (%s)\n", name, r.GCBefore, at(r.GCBefore), now, at(now), grace, from)
	nBlocked := 0
	for _, e := range r.Expired {
		if !e.Droppable {
			nBlocked++
		}
	}
	fmt.Fprintf(stdout, "%d of %s fully expired: %d droppable (%s), %d blocked (%s, %d bytes)\n", len(r.Expired), words.Plural(len(ss), "sstable"),
		len(r.Expired)-nBlocked, words.PrettyMemory(r.DroppableBytes, " "), nBlocked, words.PrettyMemory(r.BlockedBytes, " "), r.BlockedBytes)
	for _, e := range r.Expired {
		if e.Droppable {
			fmt.Fprintf(stdout, "  %s  %s, droppable\n", e.Path, words.PrettyMemory(e.Bytes, " "))
			continue
		}
		var by []string
		for _, b := range e.BlockedBy {
			by = append(by, filepath.Base(ss[b].Path))
		}
		fmt.Fprintf(stdout, "  %s  %s, blocked by %s\n", e.Path, words.PrettyMemory(e.Bytes, " "), strings.Join(by, ", "))
	}
	for _, b := range r.Blockers {
		fmt.Fprintf(stdout, "blocker %s (minTS %d): holds back %s (%s, %d bytes); alone it frees %s (%d bytes)\n", ss[b.Index].Path, ss[b.Index].MinTimestamp,
			words.Plural(len(b.Blocks), "sstable"), words.PrettyMemory(b.BlockedBytes, " "), b.BlockedBytes, words.Plural(len(b.Unblocks), "sstable"), b.UnblockedBytes)
	}
	switch {
	case r.Best >= 0:
		b := r.Blockers[r.Best]
		cond := "if it were gone"
		if b.OthersLive {
			cond = fmt.Sprintf("if it were gone, or held no data older than %d (the oldest of the other live sstables)", b.OthersMinTimestamp)
		}
		fmt.Fprintf(stdout, "best: %s: %s, compaction would drop %s, %s (%d bytes)\n", ss[b.Index].Path, cond,
			words.Plural(len(b.Unblocks), "more expired sstable"), words.PrettyMemory(b.UnblockedBytes, " "), b.UnblockedBytes)
	case nBlocked > 0:
		fmt.Fprintln(stdout, "best: no blocker alone frees anything: every blocked sstable is blocked by two or more")
	}
}

func expiredReportJSON(name string, now, grace int64, from string, r *expired.Report) expiredJSON {
	ss := r.SSTables
	out := expiredJSON{Table: name, Now: now, GCGrace: grace, GCGraceFrom: from, GCBefore: r.GCBefore, SSTables: len(ss),
		Expired: []expiredEntry{}, Blockers: []blockerEntry{}, Droppable: r.DroppableBytes, BlockedBytes: r.BlockedBytes}
	if r.HasLive {
		m := r.MinLiveTimestamp
		out.MinLive = &m
	}
	for _, e := range r.Expired {
		ee := expiredEntry{SSTable: e.Path, Bytes: e.Bytes, MinTimestamp: e.MinTimestamp, MaxTimestamp: e.MaxTimestamp,
			MaxLocalDeletionTime: e.MaxLocalDeletionTime, Droppable: e.Droppable, BlockedBy: []string{}}
		for _, b := range e.BlockedBy {
			ee.BlockedBy = append(ee.BlockedBy, ss[b].Path)
		}
		out.Expired = append(out.Expired, ee)
	}
	for i, b := range r.Blockers {
		be := blockerEntry{SSTable: ss[b.Index].Path, Bytes: ss[b.Index].Bytes, MinTimestamp: ss[b.Index].MinTimestamp,
			Blocks: []string{}, BlockedBytes: b.BlockedBytes, Unblocks: []string{}, UnblockedBytes: b.UnblockedBytes}
		for _, ei := range b.Blocks {
			be.Blocks = append(be.Blocks, r.Expired[ei].Path)
		}
		for _, ei := range b.Unblocks {
			be.Unblocks = append(be.Unblocks, r.Expired[ei].Path)
		}
		out.Blockers = append(out.Blockers, be)
		if i == r.Best {
			best := be
			out.Best = &best
		}
	}
	return out
}
