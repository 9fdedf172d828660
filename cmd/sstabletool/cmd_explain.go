package main

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/merge"
)

// explainCommand is the explain command.
func explainCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "explain",
		Usage:     "say, for one partition, which sstable's version of each cell wins a merge and why every other loses",
		ArgsUsage: "-k KEY PATHS|DIR",
		Description: "Merges partition KEY of the sstables given (files, or the table's data directory) as Cassandra's\n" +
			"read path and compaction do, and lists every version of every cell, row liveness, row, collection,\n" +
			"range and partition deletion in every sstable that holds the key: which one won, and why each\n" +
			"other lost:\n" +
			"  older timestamp                    another sstable wrote it later\n" +
			"  tie: tombstone wins                same timestamp: a deletion beats a value\n" +
			"  tie: expiring wins over ...        same timestamp: a TTL'd value beats one without (CASSANDRA-14592)\n" +
			"  tie: later local deletion time ... same timestamp, both deleted or both TTL'd\n" +
			"  tie: greater value wins            same timestamp, both values: the larger bytes win\n" +
			"  shadowed by the partition/range/row/collection deletion at T in [n]\n" +
			"  expired at T                       the winner's TTL ran out: it is a tombstone now\n" +
			"  purged                             with --purge: deleted before gc_grace, compaction drops it\n" +
			"  counter ...                        counters merge by shard (the newest clock of each counter id)\n" +
			"The sstables are numbered oldest first; [n] names one. The key is found through each sstable's\n" +
			"Filter.db and index, so a large table is not read whole. --json prints the same as one object.\n\n" +
			"Examples:\n" +
			"  sstabletool explain -k 2 /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2/\n" +
			"  sstabletool explain -k 2 --now 2024-05-01T00:00:00Z nc-1-big-Data.db   # as of a date; sstables may be named one by one\n" +
			"  sstabletool explain -k 2 --purge --gc-grace 3600 . --json | jq '.entries[].versions[] | select(.verdict != \"won\")'",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Aliases: []string{"k"}, Usage: "the partition `KEY` (composite keys as a:b; required)"},
			nowFlag, purgeFlag, gcGraceFlag, jsonFlag, accessFlag, schemaFlag, tableFlag,
		},
		Action: explainAction,
	}, sstableArgs.withRequired("key"))
}

func explainAction(c *cli.Context) error {
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	return mergeEach(c, "explained", func(g tableGroup) error {
		t, err := openTable(c, g, sf)
		if err != nil {
			return err
		}
		defer closeTable(t)
		o, err := mergeOptions(c, t, sf)
		if err != nil {
			return err
		}
		key, err := parseKey(t.SSTables()[0], "explain: -k", c.String("key"))
		if err != nil {
			return err
		}
		e, err := t.Explain(key, o)
		if err != nil {
			return err
		}
		x := explainer{t: t, e: e}
		if n, ok := schemaNames(sf, t.SSTables()[0]); ok {
			x.keyNames, x.clusteringNames = n.PartitionKey, n.Clustering
		}
		if c.Bool("json") {
			return writeJSON(x.json(e))
		}
		x.text(e)
		return nil
	})
}

// explainer words an explanation with the table's types.
type explainer struct {
	t *merge.Table
	e *merge.Explanation
	b strings.Builder
	// keyNames and clusteringNames are the key's and the clustering
	// columns' names when the schema gives them (nil: the sstable's
	// header alone, which does not name them).
	keyNames, clusteringNames []string
}

func (x *explainer) printf(f string, args ...any) { fmt.Fprintf(&x.b, f, args...) }

func (x *explainer) text(e *merge.Explanation) {
	first := x.t.SSTables()[0]
	x.printf("partition %s: %d of %d sstables hold it; merged as of %s", x.key(first, e.Key), len(e.Holding), len(x.t.SSTables()), instant(e.Now))
	if e.Purge {
		x.printf(", purging what was deleted before %s", instant(e.GCBefore))
	}
	x.printf("\n")
	held := map[int]bool{}
	for _, i := range e.Holding {
		held[i] = true
	}
	for i := range x.t.SSTables() {
		mark := " "
		if held[i] {
			mark = "*"
		}
		x.printf(" %s[%d] %s\n", mark, i+1, x.t.Name(i))
	}
	if len(e.Holding) == 0 {
		x.printf("no sstable holds the key\n")
		stdout.Write([]byte(x.b.String()))
		return
	}
	x.printf("\npartition deletion:")
	if len(e.PartitionDeletion) == 0 {
		x.printf(" none\n")
	} else {
		x.printf("\n")
		for _, v := range e.PartitionDeletion {
			x.version(&v)
		}
	}
	for _, en := range e.Entries {
		x.printf("\n%s", x.position(&en))
		if en.Output == nil {
			x.printf(" (nothing written)")
		}
		x.printf(":\n")
		for _, v := range en.Versions {
			x.version(&v)
		}
		for _, v := range mergedCounters(&en) {
			x.printf("  => %s: the merged counter\n", x.what(&v))
		}
	}
	stdout.Write([]byte(x.b.String()))
}

// mergedCounters are the counter cells an entry's output holds that the
// merge combined from several sstables' shards (no one version is them).
func mergedCounters(en *merge.Entry) []merge.Version {
	if en.Output == nil || en.Provenance == nil {
		return nil
	}
	var out []merge.Version
	for i, c := range en.Output.Cells {
		if i < len(en.Provenance.Cells) && en.Provenance.Cells[i] == merge.Merged {
			v := merge.Version{SSTable: merge.Merged, What: merge.WhatCell, Column: c.Column, Static: en.Kind == rows.KindStaticRow, Cell: c}
			v.Shards, _ = cqltype.CounterShards(c.Value)
			out = append(out, v)
		}
	}
	return out
}

// position names an entry: its static row, clustering or bound.
func (x *explainer) position(en *merge.Entry) string {
	switch en.Kind {
	case rows.KindStaticRow:
		return "static row"
	case rows.KindMarker:
		return "range tombstone " + x.bound(en.Bound)
	}
	return "row " + x.clustering(en.Clustering)
}

// key is the partition key as -k takes it, or, where the schema names
// the key's columns, each column's name and value.
func (x *explainer) key(s *sstable.SSTable, key []byte) string {
	parts := keyParts(s.KeyType(), key)
	if len(x.keyNames) == 0 || len(parts) != len(x.keyNames) {
		return keyString(s, key)
	}
	return "(" + named(x.keyNames, parts) + ")"
}

func (x *explainer) clustering(vs [][]byte) string {
	parts := make([]string, len(vs))
	types := x.t.ClusteringTypes()
	for i, v := range vs {
		parts[i] = x.value(types[i], v)
	}
	if len(x.clusteringNames) >= len(parts) {
		return "(" + named(x.clusteringNames, parts) + ")"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// named pairs values with their columns' names: a=1, b=2.
func named(names, values []string) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = names[i] + "=" + v
	}
	return strings.Join(parts, ", ")
}

func (x *explainer) bound(p clustering.Prefix) string {
	if len(p.Values) == 0 && !p.Kind.IsBoundary() {
		if p.Kind.IsStart() {
			return "from the partition's start"
		}
		return "to the partition's end"
	}
	var s string
	switch p.Kind {
	case clustering.InclStartBound:
		s = "from %s inclusive"
	case clustering.ExclStartBound:
		s = "from %s exclusive"
	case clustering.InclEndBound:
		s = "to %s inclusive"
	case clustering.ExclEndBound:
		s = "to %s exclusive"
	default:
		s = "at %s (" + p.Kind.String() + ")"
	}
	return fmt.Sprintf(s, x.clustering(p.Values))
}

func (x *explainer) value(t *cqltype.Type, v []byte) string {
	if v == nil {
		return "null"
	}
	if t != nil {
		if s, err := t.Format(v); err == nil {
			return s
		}
	}
	return "0x" + hex.EncodeToString(v)
}

// cellValue renders a cell's value as dump does (JSON: text quoted,
// collections as arrays).
func (x *explainer) cellValue(t *cqltype.Type, v []byte) string {
	if t != nil && v != nil {
		if b, err := t.AppendJSON(nil, v); err == nil {
			return string(b)
		}
	}
	return x.value(t, v)
}

// column is a version's column name and type.
func (x *explainer) column(v *merge.Version) (string, *cqltype.Type) {
	sch := x.t.Schema()
	if v.Static {
		if v.Column >= 0 && v.Column < len(sch.Static) {
			return sch.Static[v.Column].Name, x.t.StaticTypes()[v.Column]
		}
	} else if v.Column >= 0 && v.Column < len(sch.Regular) {
		return sch.Regular[v.Column].Name, x.t.RegularTypes()[v.Column]
	}
	return "?", nil
}

// what says what a version is, with its content.
func (x *explainer) what(v *merge.Version) string {
	switch v.What {
	case merge.WhatPartitionDeletion, merge.WhatRowDeletion, merge.WhatComplexDeletion, merge.WhatRangeTombstone:
		s := v.What.String()
		if v.What == merge.WhatComplexDeletion {
			name, _ := x.column(v)
			s = name + ": deleted"
		}
		if v.Shadowable {
			s += " (shadowable)"
		}
		return s + " at " + deletion(v.Deletion)
	case merge.WhatLiveness:
		s := "row liveness ts " + micros(v.Liveness.Timestamp)
		if v.Liveness.TTL != 0 {
			s += fmt.Sprintf(", ttl %d, expires %s", v.Liveness.TTL, instant(v.Liveness.LocalExpirationTime))
		}
		return s
	}
	name, t := x.column(v)
	c := &v.Cell
	s := name
	if c.Path != nil && t != nil {
		if t.Kind == cqltype.UDT {
			if f, _, err := t.FieldPath(c.Path); err == nil {
				s += "." + f
			}
		} else {
			s += "[" + x.value(t.ElementPathType(), c.Path) + "]"
		}
	}
	switch {
	case c.Flags&(rows.CellFlagDeleted|rows.CellFlagExpiring) != 0 && c.TTL == 0:
		s += fmt.Sprintf(" deleted ts %s (local deletion %s)", micros(c.Timestamp), instant(c.LocalDeletionTime))
		return s
	case v.Shards != nil:
		var total int64
		var parts []string
		for _, sh := range v.Shards {
			total += sh.Count
			kind := "remote"
			switch {
			case sh.Global:
				kind = "global"
			case sh.Local:
				kind = "local"
			}
			parts = append(parts, fmt.Sprintf("%x clock %d count %d (%s)", sh.ID, sh.Clock, sh.Count, kind))
		}
		s += fmt.Sprintf(" = %d ts %s [%s]", total, micros(c.Timestamp), strings.Join(parts, "; "))
	default:
		vt := t
		if t != nil && t.IsMultiCell() {
			vt = t.ElementValueType()
			if t.Kind == cqltype.UDT {
				_, vt, _ = t.FieldPath(c.Path)
			}
		}
		if c.Path == nil || vt == nil || vt.Kind != cqltype.Empty {
			s += " = " + x.cellValue(vt, c.Value)
		}
		s += " ts " + micros(c.Timestamp)
	}
	if c.TTL != 0 {
		s += fmt.Sprintf(", ttl %d, expires %s", c.TTL, instant(c.LocalDeletionTime))
	}
	return s
}

// version prints one version and its verdict.
func (x *explainer) version(v *merge.Version) {
	x.printf("  [%d] %s: %s\n", v.SSTable+1, x.what(v), x.verdict(v))
}

func (x *explainer) verdict(v *merge.Version) string {
	switch v.Verdict {
	case merge.Won:
		return "won"
	case merge.CounterMerged:
		return "merged by shard into the result"
	case merge.Expired:
		at := v.Liveness.LocalExpirationTime
		if v.What == merge.WhatCell {
			at = v.Cell.LocalDeletionTime
		}
		if v.What == merge.WhatCell {
			return "won, but expired at " + instant(at) + ": written as a tombstone"
		}
		return "won, but expired at " + instant(at) + ": it no longer keeps the row alive"
	case merge.Purged:
		return "won, but purged: deleted before " + instant(x.e.GCBefore) + " (gc_grace)"
	}
	s := "lost: " + v.Verdict.String()
	if b := v.By; b != nil {
		switch {
		case v.Verdict.Shadowed():
			s += " at " + deletion(deletiontime.DeletionTime{MarkedForDeleteAt: b.Timestamp, LocalDeletionTime: b.LocalDeletionTime})
			if b.SSTable >= 0 {
				s += fmt.Sprintf(" in [%d]", b.SSTable+1)
			}
		case v.Verdict == merge.ShadowableShadowed:
			s += " (ts " + micros(b.Timestamp) + ")"
		case b.SSTable >= 0:
			s += fmt.Sprintf(" (the winner is in [%d], ts %s)", b.SSTable+1, micros(b.Timestamp))
		case b.SSTable == merge.Merged:
			s += fmt.Sprintf(" (the winner is merged from several sstables, ts %s)", micros(b.Timestamp))
		}
	}
	return s
}

func micros(us int64) string {
	t := time.UnixMicro(us).UTC()
	return strconv.FormatInt(us, 10) + " (" + t.Format("2006-01-02T15:04:05.000000Z") + ")"
}

func instant(s int64) string { return time.Unix(s, 0).UTC().Format(time.RFC3339) }

func deletion(d deletiontime.DeletionTime) string {
	return micros(d.MarkedForDeleteAt) + ", local " + instant(d.LocalDeletionTime)
}
