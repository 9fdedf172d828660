package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	pq "github.com/parquet-go/parquet-go"
	pqformat "github.com/parquet-go/parquet-go/format"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/nc"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// The export is read back with parquet-go, a reader independent of the
// arrow-go writer that wrote it, and held to what partitions --json, dump
// and metadata --json print for the same sstables.

// pqPartition is a row of partitions/ as the independent reader sees it.
type pqPartition struct {
	Node                 string `parquet:"node"`
	SSTable              string `parquet:"sstable"`
	Version              string `parquet:"version"`
	Key                  string `parquet:"key"`
	KeyHex               string `parquet:"key_hex"`
	Token                *int64 `parquet:"token,optional"`
	TokenText            string `parquet:"token_text"`
	Offset               *int64 `parquet:"offset,optional"`
	Size                 *int64 `parquet:"size,optional"`
	Rows                 int64  `parquet:"rows"`
	Cells                int64  `parquet:"cells"`
	Tombstones           int64  `parquet:"tombstones"`
	RowTombstones        int64  `parquet:"row_tombstones"`
	RangeTombstones      int64  `parquet:"range_tombstones"`
	ComplexTombstones    int64  `parquet:"complex_tombstones"`
	CellTombstones       int64  `parquet:"cell_tombstones"`
	RowTTLExpired        int64  `parquet:"row_ttl_expired"`
	CellTTLExpired       int64  `parquet:"cell_ttl_expired"`
	Deletion             bool   `parquet:"deletion"`
	DeletionTimestamp    *int64 `parquet:"deletion_timestamp,optional"`
	DeletionTime         *int64 `parquet:"deletion_time,optional,timestamp(millisecond)"`
	MinTimestamp         *int64 `parquet:"min_timestamp,optional"`
	MaxTimestamp         *int64 `parquet:"max_timestamp,optional"`
	MinLocalDeletionTime *int64 `parquet:"min_local_deletion_time,optional,timestamp(millisecond)"`
}

// pqCell is a row of cells/.
type pqCell struct {
	Node              string    `parquet:"node"`
	SSTable           string    `parquet:"sstable"`
	Key               string    `parquet:"key"`
	Token             *int64    `parquet:"token,optional"`
	Clustering        []*string `parquet:"clustering,list"`
	Kind              string    `parquet:"kind"`
	Entry             string    `parquet:"entry"`
	Column            *string   `parquet:"column,optional"`
	Path              *string   `parquet:"path,optional"`
	Value             *string   `parquet:"value,optional"`
	ValueBytes        []byte    `parquet:"value_bytes,optional"`
	Timestamp         int64     `parquet:"timestamp"`
	TTL               *int32    `parquet:"ttl,optional"`
	ExpiresAt         *int64    `parquet:"expires_at,optional,timestamp(millisecond)"`
	LocalDeletionTime *int64    `parquet:"local_deletion_time,optional,timestamp(millisecond)"`
	Tombstone         bool      `parquet:"tombstone"`
	Inclusive         *bool     `parquet:"inclusive,optional"`
}

// pqSSTable is the row of sstables/.
type pqSSTable struct {
	Node                 string           `parquet:"node"`
	SSTable              string           `parquet:"sstable"`
	Path                 string           `parquet:"path"`
	Version              string           `parquet:"version"`
	Format               string           `parquet:"format"`
	Generation           string           `parquet:"generation"`
	Partitioner          string           `parquet:"partitioner"`
	ComponentBytes       map[string]int64 `parquet:"component_bytes"`
	Bytes                int64            `parquet:"bytes"`
	DataBytes            int64            `parquet:"data_bytes"`
	DataUncompressed     int64            `parquet:"data_uncompressed_bytes"`
	Compressor           *string          `parquet:"compressor,optional"`
	CompressionRatio     *float64         `parquet:"compression_ratio,optional"`
	FirstKey             *string          `parquet:"first_key,optional"`
	LastKey              *string          `parquet:"last_key,optional"`
	MinToken             *int64           `parquet:"min_token,optional"`
	MaxToken             *int64           `parquet:"max_token,optional"`
	MinTimestamp         int64            `parquet:"min_timestamp"`
	MaxTimestamp         int64            `parquet:"max_timestamp"`
	MinLocalDeletionTime *int64           `parquet:"min_local_deletion_time,optional,timestamp(millisecond)"`
	MaxLocalDeletionTime *int64           `parquet:"max_local_deletion_time,optional,timestamp(millisecond)"`
	MinTTL               int64            `parquet:"min_ttl"`
	MaxTTL               int64            `parquet:"max_ttl"`
	EstimatedPartitions  int64            `parquet:"estimated_partitions"`
	TotalRows            int64            `parquet:"total_rows"`
	Droppable            float64          `parquet:"estimated_droppable_tombstones"`
	RepairedAt           int64            `parquet:"repaired_at"`
	Level                int32            `parquet:"sstable_level"`
	Partitions           *int64           `parquet:"partitions,optional"`
	Rows                 *int64           `parquet:"rows,optional"`
	Cells                *int64           `parquet:"cells,optional"`
	Tombstones           *int64           `parquet:"tombstones,optional"`
	Savings              *int64           `parquet:"savings,optional"`
}

// The types each dataset's columns are stated to have (docs/export.md).
var wantTypes = map[string]string{
	"partitions": "node STRING, sstable STRING, version STRING, key STRING, key_hex STRING, token INT64?, token_text STRING, " +
		"offset INT64?, size INT64?, rows INT64, cells INT64, tombstones INT64, row_tombstones INT64, range_tombstones INT64, " +
		"complex_tombstones INT64, cell_tombstones INT64, row_ttl_expired INT64, cell_ttl_expired INT64, deletion BOOLEAN, " +
		"deletion_timestamp INT64?, deletion_time TIMESTAMP?, min_timestamp INT64?, max_timestamp INT64?, min_local_deletion_time TIMESTAMP?",
	"cells": "node STRING, sstable STRING, key STRING, token INT64?, clustering LIST<STRING?>, kind STRING, entry STRING, " +
		"column STRING?, path STRING?, value STRING?, value_bytes BINARY?, timestamp INT64, ttl INT32?, expires_at TIMESTAMP?, " +
		"local_deletion_time TIMESTAMP?, tombstone BOOLEAN, inclusive BOOLEAN?",
	"sstables": "node STRING, sstable STRING, path STRING, version STRING, format STRING, generation STRING, partitioner STRING, " +
		"component_bytes MAP<STRING,INT64>, bytes INT64, data_bytes INT64, data_uncompressed_bytes INT64, compressor STRING?, " +
		"compression_ratio DOUBLE?, first_key STRING?, last_key STRING?, min_token INT64?, max_token INT64?, min_timestamp INT64, " +
		"max_timestamp INT64, min_local_deletion_time TIMESTAMP?, max_local_deletion_time TIMESTAMP?, min_ttl INT64, max_ttl INT64, " +
		"estimated_partitions INT64, total_rows INT64, estimated_droppable_tombstones DOUBLE, repaired_at INT64, sstable_level INT32, " +
		"partitions INT64?, rows INT64?, cells INT64?, tombstones INT64?, savings INT64?",
}

// typeOf words a column's Parquet type as wantTypes does.
func typeOf(f pq.Field) string {
	opt := ""
	if f.Optional() {
		opt = "?"
	}
	var lt pqformat.LogicalTypeValue
	if l := f.Type().LogicalType(); l != nil {
		lt = l.Value
	}
	if !f.Leaf() {
		switch lt.(type) {
		case *pqformat.ListType:
			return "LIST<" + typeOf(f.Fields()[0].Fields()[0]) + ">" + opt
		case *pqformat.MapType:
			kv := f.Fields()[0].Fields()
			return "MAP<" + typeOf(kv[0]) + "," + typeOf(kv[1]) + ">" + opt
		}
		return "GROUP" + opt
	}
	switch v := lt.(type) {
	case *pqformat.StringType:
		return "STRING" + opt
	case *pqformat.TimestampType:
		if v.String() != "TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS)" {
			return v.String() + opt
		}
		return "TIMESTAMP" + opt
	}
	switch f.Type().Kind() {
	case pq.Int64:
		return "INT64" + opt
	case pq.Int32:
		return "INT32" + opt
	case pq.Boolean:
		return "BOOLEAN" + opt
	case pq.Double:
		return "DOUBLE" + opt
	case pq.ByteArray:
		return "BINARY" + opt
	}
	return f.Type().String() + opt
}

// readParquet reads every row of a file as T, after checking its columns
// and their types against the dataset's stated ones.
func readParquet[T any](t *testing.T, path, dataset string) []T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var got []string
	for _, fld := range f.Schema().Fields() {
		got = append(got, fld.Name()+" "+typeOf(fld))
	}
	if g := strings.Join(got, ", "); g != wantTypes[dataset] {
		t.Fatalf("%s: columns\n got %s\nwant %s", path, g, wantTypes[dataset])
	}
	r := pq.NewGenericReader[T](bytes.NewReader(b))
	defer r.Close()
	out := make([]T, r.NumRows())
	n, err := r.Read(out)
	if err != nil && err != io.EOF {
		t.Fatalf("%s: %v", path, err)
	}
	if int64(n) != r.NumRows() {
		t.Fatalf("%s: read %d of %d rows", path, n, r.NumRows())
	}
	return out
}

// runCommand runs sstabletool in process and returns its exit code,
// stdout and stderr.
func runCommand(args ...string) (int, string, string) {
	savedOut, savedErr := stdout, stderr
	var out, errOut bytes.Buffer
	stdout, stderr = &out, &errOut
	code := run(append([]string{"sstabletool"}, args...))
	stdout, stderr = savedOut, savedErr
	return code, out.String(), errOut.String()
}

// exportNow is the time every command of these tests takes for now, so
// that TTLs expire alike in each.
const exportNow = "1700000000"

// exportedTables lists what the acceptance test exports: every fixture,
// every realworld sstable, and generated tables of every built-in
// profile (in a <keyspace>/<table>-<id>/ layout, legacy and oa).
func exportedTables(t *testing.T) []string {
	paths := fixtures.DataFiles(t)
	root := filepath.Join(fixtures.Dir(t), "realworld")
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasSuffix(p, "-Data.db") {
			paths = append(paths, p)
		}
		return nil
	})
	gen := t.TempDir()
	for i, name := range append([]string{"demo"}, workload.BuiltinNames()...) {
		var p *workload.Profile
		var err error
		if name == "demo" {
			p, err = workload.ParseProfile([]byte(generate.DemoProfile), "demo")
		} else {
			p, err = workload.LoadProfile(name)
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Partitions = 40
		if name == "wide-partitions" {
			p.Partitions = 3 // thousands of rows each
		}
		v := nc.Version
		if i%2 == 1 {
			v = format.MustVersion("oa")
		}
		dir := filepath.Join(gen, "gen", strings.ReplaceAll(name, "-", "_")+"-0123456789abcdef0123456789abcdef")
		res, err := generate.Generate(p, dir, generate.Options{Version: v})
		if err != nil {
			t.Fatalf("generate %s: %v", name, err)
		}
		paths = append(paths, res.DataPath)
	}
	return paths
}

// TestExportMatchesPartitionsDumpAndMetadata exports each sstable and reads
// the files back: the partitions dataset must hold what partitions --json
// prints, row for row; the cells dataset what dump prints, entry for
// entry; the sstables dataset metadata --json's facts, savings --json's
// savings and the sums of the other two. An sstable dump cannot read must
// fail the export (exit 2) and leave no file.
func TestExportMatchesPartitionsDumpAndMetadata(t *testing.T) {
	for _, p := range exportedTables(t) {
		name := p
		if r, err := filepath.Rel(fixtures.Dir(t), p); err == nil && !strings.HasPrefix(r, "..") {
			name = r
		} else if i := strings.Index(p, "/gen/"); i >= 0 {
			name = p[i+1:]
		}
		t.Run(name, func(t *testing.T) {
			if fi, err := os.Stat(p); raceEnabled && err == nil && fi.Size() > 512<<10 {
				t.Skip("over 512 KiB: held without the race detector only (it made this one table 37 s of CI)")
			}
			out := t.TempDir()
			dumpCode, dumpOut, _ := runCommand("dump", "-t", "-l", p)
			code, _, errOut := runCommand("export", "--out", out, "--node", "n1", "-u", exportNow, p)
			files := listParquet(t, out)
			if dumpCode != 0 {
				if code != exitBadData || len(files) != 0 || !strings.Contains(errOut, filepath.Dir(p)) {
					t.Fatalf("dump fails on it, export exits %d with files %v and stderr %q", code, files, errOut)
				}
				return
			}
			if code != 0 {
				t.Fatalf("export exit %d: %s", code, errOut)
			}
			if len(files) != 3 {
				t.Fatalf("files %v, want one per dataset", files)
			}
			ks, table := exportTableNames(t, p)
			var parts []pqPartition
			var cells []pqCell
			var sst []pqSSTable
			for _, f := range files {
				rel, _ := filepath.Rel(out, f)
				dataset, _, _ := strings.Cut(rel, string(filepath.Separator))
				want := filepath.Join(dataset, "keyspace="+ks, "table="+table, "part-n1-"+strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), "Data.db"), "-")+".parquet")
				if rel != want {
					t.Errorf("file %s, want %s", rel, want)
				}
				switch dataset {
				case "partitions":
					parts = readParquet[pqPartition](t, f, dataset)
				case "cells":
					cells = readParquet[pqCell](t, f, dataset)
				case "sstables":
					sst = readParquet[pqSSTable](t, f, dataset)
				}
			}
			if len(sst) != 1 {
				t.Fatalf("sstables/ holds %d rows", len(sst))
			}
			checkPartitions(t, p, sst[0].Partitioner, parts)
			checkCells(t, dumpOut, parts, cells, false)
			checkSSTables(t, p, parts, sst)
		})
	}
}

// exportTableNames is the keyspace and table the export must name p's files by:
// its <keyspace>/<table>-<id>/ directory, or (outside that layout) the
// directory's name, in keyspace "keyspace", as schema and dump name them.
func exportTableNames(t *testing.T, p string) (string, string) {
	dir := filepath.Dir(p)
	base := filepath.Base(dir)
	if i := strings.LastIndexByte(base, '-'); i > 0 && len(base)-i-1 == 32 {
		return filepath.Base(filepath.Dir(dir)), base[:i]
	}
	return "keyspace", base
}

func listParquet(t *testing.T, dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !info.IsDir() {
			if !strings.HasSuffix(p, ".parquet") || strings.HasPrefix(info.Name(), ".") {
				t.Errorf("%s: a file engines would not read (or would) left in the export", p)
			}
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func ptr[T any](v T) *T { return &v }

// checkPartitions holds partitions/ to partitions --json.
func checkPartitions(t *testing.T, p, partitioner string, parts []pqPartition) {
	code, out, errOut := runCommand("partitions", "--json", "-u", exportNow, p)
	if code != 0 {
		t.Fatalf("partitions: exit %d: %s", code, errOut)
	}
	var want []partitionRow
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}
	if len(parts) != len(want) {
		t.Fatalf("%d partitions exported, partitions --json lists %d", len(parts), len(want))
	}
	for i, w := range want {
		g := parts[i]
		if g.Node != "n1" || g.SSTable != strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), "Data.db"), "-") {
			t.Fatalf("partition %d: node %q sstable %q", i, g.Node, g.SSTable)
		}
		got := partitionRow{SSTable: w.SSTable, Key: g.Key, Token: g.TokenText, Offset: *g.Offset, Size: *g.Size, Rows: g.Rows, Cells: g.Cells,
			Tombstones: g.Tombstones, Deletion: g.Deletion, RowTombstones: g.RowTombstones, RangeTombstones: g.RangeTombstones,
			ComplexTombstones: g.ComplexTombstones, CellTombstones: g.CellTombstones, RowTTLExpired: g.RowTTLExpired, CellTTLExpired: g.CellTTLExpired}
		if d := cmp.Diff(w, got, cmp.AllowUnexported(partitionRow{}), cmp.FilterPath(func(p cmp.Path) bool {
			// the export has the key, not its columns' names (the schema's)
			return p.Last().String() == ".tok" || p.Last().String() == ".partitioner" || p.Last().String() == ".KeyColumns"
		}, cmp.Ignore())); d != "" {
			t.Fatalf("partition %d (-partitions --json +export):\n%s", i, d)
		}
		if tok, err := strconv.ParseInt(w.Token, 10, 64); err == nil && strings.HasSuffix(partitioner, "Murmur3Partitioner") {
			if g.Token == nil || *g.Token != tok {
				t.Fatalf("partition %d: token %v, want %d", i, g.Token, tok)
			}
		} else if g.Token != nil && !strings.HasSuffix(partitioner, "Murmur3Partitioner") {
			t.Fatalf("partition %d: token %d for a partition that has no Murmur3 token", i, *g.Token)
		}
		if g.Deletion != (g.DeletionTimestamp != nil) || g.Deletion != (g.DeletionTime != nil) {
			t.Fatalf("partition %d: deletion %v with timestamp %v and time %v", i, g.Deletion, g.DeletionTimestamp, g.DeletionTime)
		}
	}
}

// dumpPartition is one line of dump -t -l.
type dumpPartition struct {
	Partition struct {
		Key      []string      `json:"key"`
		Position int64         `json:"position"`
		Deletion *dumpDeletion `json:"deletion_info"`
	} `json:"partition"`
	Rows []struct {
		Type       string            `json:"type"`
		Clustering []json.RawMessage `json:"clustering"`
		Liveness   *struct {
			Timestamp string `json:"tstamp"`
			TTL       *int32 `json:"ttl"`
			ExpiresAt string `json:"expires_at"`
		} `json:"liveness_info"`
		Deletion *dumpDeletion `json:"deletion_info"`
		Cells    []struct {
			Name      string            `json:"name"`
			Path      []json.RawMessage `json:"path"`
			Value     json.RawMessage   `json:"value"`
			Deletion  *dumpDeletion     `json:"deletion_info"`
			Timestamp string            `json:"tstamp"`
			TTL       *int32            `json:"ttl"`
			ExpiresAt string            `json:"expires_at"`
		} `json:"cells"`
		Start, End *struct {
			Type       string            `json:"type"`
			Clustering []json.RawMessage `json:"clustering"`
			Deletion   dumpDeletion      `json:"deletion_info"`
		}
	} `json:"rows"`
}

type dumpDeletion struct {
	MarkedDeleted   string `json:"marked_deleted"`
	LocalDeleteTime string `json:"local_delete_time"`
}

// text is a dumped JSON value as the value column holds it.
func text(t *testing.T, raw json.RawMessage) *string {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	return ptr(string(raw))
}

func num(t *testing.T, s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("dump printed %q for a number: %v", s, err)
	}
	return v
}

func millis(t *testing.T, s string) *int64 {
	if s == "" {
		return nil
	}
	return ptr(num(t, s) * 1000)
}

// checkCells holds cells/ to dump: the records the dump's JSON gives, in
// its order, with every column. Of a merged export (dumpOut is dump
// --merge's), partitions/ has no offsets and the sstable column, which
// names each record's own sstable, is not compared (checkProvenance is
// for that).
func checkCells(t *testing.T, dumpOut string, parts []pqPartition, cells []pqCell, merged bool) {
	var want []pqCell
	// The cells whose TTL the dump left out as the row's: with it, it
	// leaves out their expiry, which a merged row's cells may have of
	// their own (written later, with the same TTL).
	rowsTTL := map[int]bool{}
	sc := bufio.NewScanner(strings.NewReader(dumpOut))
	sc.Buffer(nil, 1<<30)
	pi := 0
	for ; sc.Scan(); pi++ {
		var dp dumpPartition
		if err := json.Unmarshal(sc.Bytes(), &dp); err != nil {
			t.Fatal(err)
		}
		if pi >= len(parts) {
			t.Fatalf("dump has more partitions than partitions/")
		}
		pp := parts[pi]
		if merged {
			if key := strings.Join(dp.Partition.Key, ":"); key != pp.Key || pp.Offset != nil || pp.Size != nil {
				t.Fatalf("partition %d: dump --merge key %q, partitions/ %q at %v size %v", pi, key, pp.Key, pp.Offset, pp.Size)
			}
		} else if key := strings.Join(dp.Partition.Key, ":"); key != pp.Key || dp.Partition.Position != *pp.Offset {
			t.Fatalf("partition %d: dump key %q at %d, partitions/ %q at %d", pi, key, dp.Partition.Position, pp.Key, *pp.Offset)
		}
		if d := dp.Partition.Deletion; d != nil {
			if pp.DeletionTimestamp == nil || *pp.DeletionTimestamp != num(t, d.MarkedDeleted) || *pp.DeletionTime != *millis(t, d.LocalDeleteTime) {
				t.Fatalf("partition %d: deletion %+v, partitions/ %v %v", pi, d, pp.DeletionTimestamp, pp.DeletionTime)
			}
		} else if pp.Deletion {
			t.Fatalf("partition %d: dump prints no deletion", pi)
		}
		rec := func(kind, entry string, clust []json.RawMessage) pqCell {
			c := pqCell{Node: "n1", SSTable: pp.SSTable, Key: pp.Key, Token: pp.Token, Kind: kind, Entry: entry, Clustering: []*string{}}
			for _, v := range clust {
				if string(v) == "null" {
					c.Clustering = append(c.Clustering, nil)
				} else {
					c.Clustering = append(c.Clustering, text(t, v))
				}
			}
			return c
		}
		for _, r := range dp.Rows {
			switch r.Type {
			case "range_tombstone_bound", "range_tombstone_boundary":
				for _, side := range []struct {
					name string
					b    *struct {
						Type       string            `json:"type"`
						Clustering []json.RawMessage `json:"clustering"`
						Deletion   dumpDeletion      `json:"deletion_info"`
					}
				}{{"start", r.Start}, {"end", r.End}} {
					if side.b == nil {
						continue
					}
					clust := side.b.Clustering
					// sstabledump prints a bound's missing values as "*";
					// the export lists the values the bound has.
					for len(clust) > 0 && string(clust[len(clust)-1]) == `"*"` {
						clust = clust[:len(clust)-1]
					}
					c := rec(r.Type, side.name, clust)
					c.Timestamp, c.LocalDeletionTime, c.Tombstone = num(t, side.b.Deletion.MarkedDeleted), millis(t, side.b.Deletion.LocalDeleteTime), true
					c.Inclusive = ptr(side.b.Type == "inclusive")
					want = append(want, c)
				}
				continue
			}
			kind := "row"
			if r.Type == "static_block" {
				kind = "static"
			}
			var rowTS string
			var rowTTL *int32
			var rowExpires string
			if l := r.Liveness; l != nil {
				if len(r.Cells) == 0 {
					// A row's liveness is a record of its own only when
					// no cell stands for the row.
					c := rec(kind, "liveness", r.Clustering)
					c.Timestamp, c.TTL, c.ExpiresAt = num(t, l.Timestamp), l.TTL, millis(t, l.ExpiresAt)
					want = append(want, c)
				}
				rowTS, rowTTL, rowExpires = l.Timestamp, l.TTL, l.ExpiresAt
			}
			if d := r.Deletion; d != nil {
				c := rec(kind, "deletion", r.Clustering)
				c.Timestamp, c.LocalDeletionTime, c.Tombstone = num(t, d.MarkedDeleted), millis(t, d.LocalDeleteTime), true
				want = append(want, c)
			}
			for _, dc := range r.Cells {
				if dc.Deletion != nil && dc.Deletion.MarkedDeleted != "" {
					c := rec(kind, "column_deletion", r.Clustering)
					c.Column = ptr(dc.Name)
					c.Timestamp, c.LocalDeletionTime, c.Tombstone = num(t, dc.Deletion.MarkedDeleted), millis(t, dc.Deletion.LocalDeleteTime), true
					want = append(want, c)
					continue
				}
				c := rec(kind, "cell", r.Clustering)
				c.Column = ptr(dc.Name)
				if len(dc.Path) == 1 {
					c.Path = text(t, dc.Path[0])
				}
				ts := dc.Timestamp
				if ts == "" {
					ts = rowTS
				}
				c.Timestamp = num(t, ts)
				if dc.Deletion != nil {
					c.Tombstone, c.LocalDeletionTime = true, millis(t, dc.Deletion.LocalDeleteTime)
				} else {
					c.Value = text(t, dc.Value)
					c.TTL, c.ExpiresAt = dc.TTL, millis(t, dc.ExpiresAt)
					if c.TTL == nil && rowTTL != nil {
						// sstabledump leaves out a cell's TTL when it is
						// the row's; a cell of that row without a TTL
						// prints the same.
						c.TTL, c.ExpiresAt = rowTTL, millis(t, rowExpires)
						rowsTTL[len(want)] = true
					}
				}
				want = append(want, c)
			}
		}
	}
	if pi != len(parts) {
		t.Fatalf("dump printed %d partitions, partitions/ holds %d", pi, len(parts))
	}
	if len(cells) != len(want) {
		t.Fatalf("cells/ holds %d rows, the dump %d", len(cells), len(want))
	}
	var got []pqCell
	for i := range cells {
		c := cells[i]
		if c.Clustering == nil {
			c.Clustering = []*string{}
		}
		if c.TTL == nil && want[i].TTL != nil && want[i].Entry == "cell" {
			// The ambiguity above: a live cell without a TTL in a row
			// with one.
			c.TTL, c.ExpiresAt = want[i].TTL, want[i].ExpiresAt
		}
		if merged && rowsTTL[i] && c.TTL != nil && *c.TTL == *want[i].TTL {
			// checkProvenance holds the expiry to the cell's sstable.
			want[i].ExpiresAt = c.ExpiresAt
		}
		if c.Value != nil && c.ValueBytes == nil {
			t.Fatalf("cell %d: a value without its bytes", i)
		}
		c.ValueBytes = nil
		if merged {
			c.SSTable = want[i].SSTable
		}
		got = append(got, c)
	}
	// cmp.Diff only to word a difference: on tens of thousands of cells
	// it costs seconds that reflect.DeepEqual does not.
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("cells (-dump +export):\n%s", cmp.Diff(want, got))
	}
}

// checkSSTables holds sstables/ to metadata --json, savings --json and
// the sums of partitions/.
func checkSSTables(t *testing.T, p string, parts []pqPartition, rows []pqSSTable) {
	if len(rows) != 1 {
		t.Fatalf("sstables/ holds %d rows", len(rows))
	}
	g := rows[0]
	code, out, errOut := runCommand("metadata", "--json", p)
	if code != 0 {
		t.Fatalf("metadata: exit %d: %s", code, errOut)
	}
	var m []struct {
		Path, Version, Format, Generation, Partitioner string
		MinTimestamp                                   int64 `json:"min_timestamp"`
		MaxTimestamp                                   int64 `json:"max_timestamp"`
		MinTTL                                         int64 `json:"min_ttl"`
		MaxTTL                                         int64 `json:"max_ttl"`
		TotalRows                                      int64 `json:"total_rows"`
		DataSize                                       int64 `json:"data_size_on_disk"`
		Uncompressed                                   int64 `json:"data_size_uncompressed"`
		Level                                          int32 `json:"sstable_level"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	want := m[0]
	gotM := want
	gotM.Path, gotM.Version, gotM.Format, gotM.Generation, gotM.Partitioner = g.Path, g.Version, g.Format, g.Generation, g.Partitioner
	gotM.MinTimestamp, gotM.MaxTimestamp, gotM.MinTTL, gotM.MaxTTL, gotM.TotalRows = g.MinTimestamp, g.MaxTimestamp, g.MinTTL, g.MaxTTL, g.TotalRows
	gotM.DataSize, gotM.Uncompressed, gotM.Level = g.DataBytes, g.DataUncompressed, g.Level
	if d := cmp.Diff(want, gotM); d != "" {
		t.Errorf("sstables/ (-metadata --json +export):\n%s", d)
	}
	var sum pqSSTable
	sum.Partitions, sum.Rows, sum.Cells, sum.Tombstones = ptr(int64(len(parts))), ptr(int64(0)), ptr(int64(0)), ptr(int64(0))
	for _, pp := range parts {
		*sum.Rows += pp.Rows
		*sum.Cells += pp.Cells
		*sum.Tombstones += pp.Tombstones
	}
	if *g.Partitions != *sum.Partitions || *g.Rows != *sum.Rows || *g.Cells != *sum.Cells || *g.Tombstones != *sum.Tombstones {
		t.Errorf("sstables/ totals %d %d %d %d, partitions/ sums %d %d %d %d", *g.Partitions, *g.Rows, *g.Cells, *g.Tombstones,
			*sum.Partitions, *sum.Rows, *sum.Cells, *sum.Tombstones)
	}
	var total int64
	for name, n := range g.ComponentBytes {
		fi, err := os.Stat(strings.TrimSuffix(p, "Data.db") + name)
		if err != nil || fi.Size() != n {
			t.Errorf("component %s: %d bytes exported, on disk %v %v", name, n, fi, err)
		}
		total += n
	}
	if total != g.Bytes || g.ComponentBytes["Data.db"] != g.DataBytes {
		t.Errorf("bytes %d, components sum to %d; Data.db %d, data_bytes %d", g.Bytes, total, g.ComponentBytes["Data.db"], g.DataBytes)
	}
	code, out, _ = runCommand("savings", "--json", p)
	var sv savingsReport
	if code == 0 && json.Unmarshal([]byte(out), &sv) == nil && len(sv.SSTables) == 1 {
		before, after := sv.SSTables[0].Totals()
		if g.Savings == nil || *g.Savings != before-after {
			t.Errorf("savings %v, savings --json says %d", g.Savings, before-after)
		}
	} else if code == 0 && (g.Savings == nil || *g.Savings != 0) {
		t.Errorf("savings %v for an sstable savings has nothing to save of", g.Savings)
	}
	if g.Savings == nil {
		t.Errorf("no savings (savings exit %d)", code)
	}
	_ = fmt.Sprint
}
