package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/merge"
)

// Flags of the commands that merge a table's sstables (dump --merge,
// explain).
var (
	nowFlag = &cli.StringFlag{Name: "now", Usage: "merge as of time `T`: epoch seconds or RFC 3339 (2024-05-01T12:00:00Z); " +
		"decides which TTLs have expired and, with --purge, what gc_grace has passed (default: the current time)"}
	purgeFlag = &cli.BoolFlag{Name: "purge", Usage: "also drop what a major compaction would purge: tombstones (and expired data) " +
		"deleted more than gc_grace before --now"}
	gcGraceFlag = &cli.Int64Flag{Name: "gc-grace", Usage: "gc_grace_seconds for --purge, `SECONDS` " +
		"(default: the table's gc_grace_seconds in --schema, else 864000)"}
)

// parseNow reads --now: epoch seconds or an RFC 3339 time; the current
// time without it.
func parseNow(c *cli.Context) (int64, error) {
	v := strings.TrimSpace(c.String("now"))
	if v == "" {
		return time.Now().Unix(), nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.Unix(), nil
	}
	return 0, usageError("--now %q: give epoch seconds (1714564800) or an RFC 3339 time (2024-05-01T12:00:00Z)", v)
}

// mergeOptions reads --now, --purge and --gc-grace for table t; sf is
// --schema (nil without), whose gc_grace_seconds is the default.
func mergeOptions(c *cli.Context, t *merge.Table, sf *inspect.SchemaSource) (merge.Options, error) {
	// Bad flags stop the command: no other table would do better.
	now, err := parseNow(c)
	if err != nil {
		return merge.Options{}, stop(err)
	}
	o := merge.Options{Now: now, Purge: c.Bool("purge"), GCGraceSeconds: merge.DefaultGCGraceSeconds}
	switch {
	case c.IsSet("gc-grace"):
		if o.GCGraceSeconds = c.Int64("gc-grace"); o.GCGraceSeconds < 0 {
			return o, stop(usageError("--gc-grace %d: must not be negative", o.GCGraceSeconds))
		}
		if !o.Purge {
			return o, stop(usageError("--gc-grace says when tombstones are purged: it needs --purge"))
		}
	case sf != nil:
		if ts, err := sf.Table(t.SSTables()[0]); err == nil && ts != nil && ts.HasGCGrace {
			o.GCGraceSeconds = ts.GCGraceSeconds
		}
	}
	return o, nil
}

// tableGroup is the sstables of one table that a merging command was
// given: every found sstable, or with -r those of one directory.
type tableGroup struct {
	dir   string
	found []format.Found
}

// groupTables groups the sstables found: by directory with -r (each
// table merges alone), else all in one group (which the merge refuses if
// they are two tables).
func groupTables(sc *scan, recursive bool) []tableGroup {
	if !recursive {
		return []tableGroup{{found: sc.found}}
	}
	var groups []tableGroup
	at := map[string]int{}
	for _, f := range sc.found {
		// By the sstable's own directory: a snapshot of a table (with
		// --snapshots) is merged on its own, not into the live table.
		dir := filepath.Dir(f.Path)
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		i, ok := at[dir]
		if !ok {
			i = len(groups)
			at[dir] = i
			groups = append(groups, tableGroup{dir: dir})
		}
		groups[i].found = append(groups[i].found, f)
	}
	return groups
}

// openTable opens a group's sstables (checked against --schema) as one
// merged table. The first that cannot be opened is the error, named.
func openTable(c *cli.Context, g tableGroup, sf *inspect.SchemaSource) (*merge.Table, error) {
	var ssts []*sstable.SSTable
	closeAll := func() {
		for _, s := range ssts {
			s.Close()
		}
	}
	for _, f := range g.found {
		if f.Err != nil {
			closeAll()
			return nil, fmt.Errorf("%s", failureText(f.Path, f.Err))
		}
		s, err := openFound(c, f.Path, sf)
		if err != nil {
			closeAll()
			if errors.As(err, new(stopError)) {
				return nil, err
			}
			return nil, fmt.Errorf("%s", failureText(f.Path, err))
		}
		ssts = append(ssts, s)
	}
	t, err := merge.New(ssts)
	if err != nil {
		closeAll()
		return nil, err
	}
	// Cells of the columns the schema says were dropped, written before
	// the drop, are not read (every command that merges goes through
	// here: query, dump --merge, explain, convert --merge, savings
	// --compaction, export --merge).
	if sf != nil {
		t.DropColumns(sf.DroppedTimes(ssts[0]))
	}
	return t, nil
}

// closeTable closes the sstables openTable opened.
func closeTable(t *merge.Table) {
	for _, s := range t.SSTables() {
		s.Close()
	}
}

// mergeEach runs fn on each table of the command's sstables. A table that
// fails is named on stderr and the others go on; the exit code is 2 at
// the end when one failed.
func mergeEach(c *cli.Context, verb string, fn func(g tableGroup) error) error {
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	return mergeGroups(c, groupTables(sc, c.Bool("recursive")), verb, fn)
}

// mergeGroups is mergeEach over groups found already.
func mergeGroups(c *cli.Context, groups []tableGroup, verb string, fn func(g tableGroup) error) error {
	failed := 0
	for _, g := range groups {
		err := fn(g)
		if err == nil {
			continue
		}
		var st stopError
		if errors.As(err, &st) {
			return st.error
		}
		if ec, ok := err.(cli.ExitCoder); ok && ec.ExitCode() == exitBadData && len(groups) == 1 {
			return err
		}
		failed++
		// An error that names a file of the table already says which
		// table it is (the file's path may be relative where g.dir is not).
		if g.dir == "" || strings.Contains(err.Error(), filepath.Base(g.dir)+string(filepath.Separator)) || strings.Contains(err.Error(), g.dir) {
			fmt.Fprintf(stderr, "sstabletool: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "sstabletool: %s: %v\n", g.dir, err)
		}
	}
	switch {
	case failed == 0:
		return nil
	case len(groups) == 1:
		return cli.Exit("", exitBadData)
	}
	return cli.Exit(fmt.Sprintf("%d of %d tables could not be %s", failed, len(groups), verb), exitBadData)
}

// mergedRows reads a merged partition as the dump renderer reads a
// decoder.
type mergedRows struct{ p *merge.Partition }

func (m mergedRows) Next(bool) (*rows.Unfiltered, error) { return m.p.Next() }

// sortKeys puts partition keys in the table's order (token, then bytes)
// and drops repeats, as sstabledump's scanner over -k's tokens prints
// them.
func sortKeys(t *merge.Table, keys [][]byte) [][]byte {
	p := t.Partitioner()
	slices.SortFunc(keys, p.CompareKeys)
	return slices.CompactFunc(keys, func(a, b []byte) bool { return bytes.Equal(a, b) })
}
