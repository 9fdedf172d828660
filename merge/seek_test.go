package merge_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/merge"
)

// A wide partition over many small compressed chunks and index blocks,
// in two sstables: the second deletes a range of the first's rows (so a
// block boundary falls inside an open range) and overwrites a few.
func writeWideTable(t *testing.T, version string) (paths []string, keys []string) {
	t.Helper()
	tt := newTestTable(false)
	var err error
	if tt.schema.Version, err = format.ParseFormatVersion(format.Big, version); version == "da" {
		tt.schema.Version, err = format.ParseFormatVersion(format.BTI, version)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ks", "t-0123456789abcdef0123456789abcdef")
	keys = []string{"wide"}
	for i := 0; i < 30; i++ {
		keys = append(keys, fmt.Sprintf("k%02d", i))
	}
	slices.SortFunc(keys, func(a, b string) int { return token.Murmur3.CompareKeys([]byte(a), []byte(b)) })
	pad := strings.Repeat("x", 90)
	for g := 1; g <= 2; g++ {
		w, err := writer.NewSSTableWriter(dir, writer.Config{Version: tt.schema.Version, Generation: strconv.Itoa(g),
			Header: tt.header, Schema: tt.schema, Partitioner: stats.Murmur3Partitioner, ColumnIndexSize: 2 << 10,
			Compression: &writer.Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 1 << 12, MaxCompressedLength: 1<<31 - 1}})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if err := w.StartPartition([]byte(k), deletiontime.Live); err != nil {
				t.Fatal(err)
			}
			n := 3
			if k == "wide" {
				n = 3000
			}
			var items []*rows.Unfiltered
			switch g {
			case 1:
				for i := 0; i < n; i++ {
					items = append(items, row(i, value(2000, fmt.Sprintf("%s%d-%s", k, i, pad))))
				}
			case 2:
				if k == "wide" {
					items = append(items, marker(clustering.InclStartBound, 1000, dt(3000, 500)))
					items = append(items, row(1500, value(3500, "written after the range deletion")))
					items = append(items, marker(clustering.ExclEndBound, 2000, dt(3000, 500)))
					items = append(items, row(2500, value(4000, "overwritten")))
				} else {
					items = append(items, row(1, value(4000, "new")))
				}
			}
			for _, u := range items {
				if err := w.Add(u); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.EndPartition(); err != nil {
				t.Fatal(err)
			}
		}
		p, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths, keys
}

// collect reads a merged partition's rows as "ck=value" lines.
func collect(t *testing.T, p *merge.Partition) ([]string, error) {
	t.Helper()
	var out []string
	if p == nil {
		return nil, nil
	}
	for {
		u, err := p.Next()
		if err != nil {
			return out, err
		}
		if u == nil {
			return out, nil
		}
		if u.Kind != rows.KindRow {
			continue
		}
		line := fmt.Sprintf("%d", int32(uint32(u.Clustering[0][0])<<24|uint32(u.Clustering[0][1])<<16|uint32(u.Clustering[0][2])<<8|uint32(u.Clustering[0][3])))
		for _, c := range u.Cells {
			line += "=" + string(c.Value)
		}
		out = append(out, line)
	}
}

func inclStart(n int) clustering.Prefix {
	return clustering.Prefix{Kind: clustering.InclStartBound, Values: ck(n)}
}

// GetFrom returns what Get does from the bound on, in both formats, at
// bounds in and out of the deleted range and on block edges.
func TestGetFromMatchesGet(t *testing.T) {
	for _, v := range []string{"oa", "nb", "da"} {
		paths, _ := writeWideTable(t, v)
		tbl, err := merge.Open(paths, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := merge.Options{Now: 1e9, GCGraceSeconds: merge.DefaultGCGraceSeconds}
		p, err := tbl.Get([]byte("wide"), o)
		if err != nil {
			t.Fatal(err)
		}
		all, err := collect(t, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 3000-1000+1 {
			t.Fatalf("%s: %d rows merged, want 2001 (1000 deleted, one written again)", v, len(all))
		}
		for _, from := range []int{0, 1, 999, 1000, 1001, 1499, 1500, 1999, 2000, 2500, 2999, 3000, 5000} {
			for _, kind := range []clustering.Kind{clustering.InclStartBound, clustering.ExclStartBound} {
				p, err := tbl.GetFrom([]byte("wide"), clustering.Prefix{Kind: kind, Values: ck(from)}, o)
				if err != nil {
					t.Fatal(err)
				}
				got, err := collect(t, p)
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, l := range all {
					n, _ := strconv.Atoi(l[:strings.IndexByte(l, '=')])
					if n > from || n == from && kind == clustering.InclStartBound {
						want = append(want, l)
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: from %v %d (-Get +GetFrom):\n%s", v, kind, from, diff)
				}
			}
		}
		tbl.Close()
	}
}

// damageChunkAt flips a byte in the compressed chunk of Data.db holding
// uncompressed position pos, so that reading it fails its CRC.
func damageChunkAt(t *testing.T, dataPath string, pos int64) {
	t.Helper()
	s, err := sstable.Open(dataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := s.Data().Info()
	at := info.ChunkOffsets[pos/int64(info.ChunkLength)] + 2
	s.Close()
	b, err := os.ReadFile(dataPath)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0xff
	if err := os.WriteFile(dataPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A lookup reads no more than it needs: with the chunks of the first
// sstable's wide partition damaged before the slice's start, and a chunk
// of another partition damaged too, a scan and a whole-partition Get fail
// on the damage while GetFrom past it, and Get of an intact partition,
// read only what is intact.
func TestLookupsReadOnlyTheirBlocks(t *testing.T) {
	for _, v := range []string{"oa", "da"} {
		paths, keys := writeWideTable(t, v)
		// The wide partition's row 300 and the first small partition after
		// it in the first sstable.
		s, err := sstable.Open(paths[0], sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e, ok, err := s.Find([]byte("wide"))
		if err != nil || !ok {
			t.Fatal(err, ok)
		}
		var h rows.PartitionHeader
		dec, err := s.PartitionAt(e.Position, &h)
		if err != nil {
			t.Fatal(err)
		}
		var row300 int64
		for i := 0; i <= 300; i++ {
			u, err := dec.Next(false)
			if err != nil {
				t.Fatal(err)
			}
			row300 = u.Offset
		}
		other := keys[0]
		if other == "wide" {
			other = keys[1]
		}
		oe, ok, err := s.Find([]byte(other))
		if err != nil || !ok {
			t.Fatal(err, ok)
		}
		s.Close()
		damageChunkAt(t, paths[0], row300)
		intact := keys[len(keys)-1]
		if intact == "wide" || intact == other {
			intact = keys[len(keys)-2]
		}
		// Damage the other partition's chunk only when it does not hold
		// the intact one or the wide one's end.
		damageChunkAt(t, paths[0], oe.Position)

		tbl, err := merge.Open(paths, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := merge.Options{Now: 1e9, GCGraceSeconds: merge.DefaultGCGraceSeconds}
		if _, err := collectScan(tbl, o); err == nil || !strings.Contains(err.Error(), "CRC") {
			t.Fatalf("%s: a scan should meet the damaged chunk, got %v", v, err)
		}
		p, err := tbl.Get([]byte("wide"), o)
		if err == nil {
			_, err = collect(t, p)
		}
		if err == nil {
			t.Fatalf("%s: a whole-partition Get should meet the damaged chunk", v)
		}
		p, err = tbl.GetFrom([]byte("wide"), inclStart(2600), o)
		if err != nil {
			t.Fatalf("%s: GetFrom: %v", v, err)
		}
		got, err := collect(t, p)
		if err != nil || len(got) != 400 {
			t.Fatalf("%s: GetFrom read %d rows, err %v; want the 400 rows from 2600 without reading the damaged chunk", v, len(got), err)
		}
		p, err = tbl.Get([]byte(intact), o)
		if err != nil {
			t.Fatalf("%s: Get of an intact partition: %v", v, err)
		}
		if got, err := collect(t, p); err != nil || len(got) != 3 {
			t.Fatalf("%s: Get(%s) = %v, %v", v, intact, got, err)
		}
		tbl.Close()
	}
}

func collectScan(tbl *merge.Table, o merge.Options) ([][]byte, error) {
	sc, err := tbl.Scan(o)
	if err != nil {
		return nil, err
	}
	var keys [][]byte
	for {
		p, err := sc.Next()
		if err != nil || p == nil {
			return keys, err
		}
		keys = append(keys, bytes.Clone(p.Header.Key))
		for {
			u, err := p.Next()
			if err != nil {
				return keys, err
			}
			if u == nil {
				break
			}
		}
	}
}

// ScanFrom starts at the token asked, through the index, and returns the
// rest of what Scan returns.
func TestScanFromMatchesScan(t *testing.T) {
	for _, v := range []string{"oa", "da"} {
		paths, keys := writeWideTable(t, v)
		tbl, err := merge.Open(paths, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := merge.Options{Now: 1e9, GCGraceSeconds: merge.DefaultGCGraceSeconds}
		all, err := collectScan(tbl, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != len(keys) {
			t.Fatalf("%d partitions, want %d", len(all), len(keys))
		}
		for i := 0; i <= len(keys); i++ {
			from := token.Murmur3Token(1<<63 - 1)
			if i < len(keys) {
				from = token.Murmur3.Token([]byte(keys[i]))
			}
			sc, err := tbl.ScanFrom(from, o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				p, err := sc.Next()
				if err != nil {
					t.Fatal(err)
				}
				if p == nil {
					break
				}
				got = append(got, string(p.Header.Key))
			}
			want := keys[min(i, len(keys)):]
			if i == len(keys) {
				want = nil
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: from %v (-want +got):\n%s", v, from, diff)
			}
		}
		tbl.Close()
	}
}
