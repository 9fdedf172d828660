package generate

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/verify"
	"github.com/sstabletool/sstabletool/workload"
)

const stressDir = "../../workload/testdata/stress"

func stressProfile(t *testing.T, name string, edit func(string) string) *workload.Profile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(stressDir, name))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	if edit != nil {
		src = edit(src)
	}
	p, err := workload.ParseProfile([]byte(src), name)
	if err != nil {
		t.Fatal(err)
	}
	if p.Stress == nil {
		t.Fatalf("%s: not a cassandra-stress profile", name)
	}
	return p
}

// stressScan reads every partition of a generated sstable and checks it
// independently of verify: every clustering sorts after the one before by
// the header's types, every value decodes as its column's type, counter
// cells are well-formed contexts. It returns the rows of each partition
// and every counter total.
func stressScan(t *testing.T, path string) (rowsPer []int, counters []int64) {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ct, st, rt := s.ClusteringTypes(), s.StaticTypes(), s.RegularTypes()
	d := s.Decoder(0)
	var h rows.PartitionHeader
	for {
		err := d.ReadPartitionHeader(&h)
		if errors.Is(err, io.EOF) {
			return rowsPer, counters
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.KeyType().Format(h.Key); err != nil {
			t.Fatalf("key %x: %v", h.Key, err)
		}
		var prev [][]byte
		n := 0
		for {
			u, err := d.Next(false)
			if err != nil {
				t.Fatal(err)
			}
			if u == nil {
				break
			}
			types := rt
			if u.Kind == rows.KindStaticRow {
				types = st
			} else {
				n++
				if prev != nil && compareClustering(ct, prev, u.Clustering) >= 0 {
					t.Fatalf("partition %x: rows out of order: %x then %x", h.Key, prev, u.Clustering)
				}
				prev = prev[:0]
				for _, v := range u.Clustering {
					prev = append(prev, slices.Clone(v))
				}
			}
			for _, c := range u.Cells {
				typ := types[c.Column]
				switch {
				case c.IsTombstone():
				case typ.IsCounter():
					total, err := cqltype.CounterTotal(c.Value)
					if err != nil {
						t.Fatalf("counter %x: %v", c.Value, err)
					}
					counters = append(counters, total)
				case typ.IsMultiCell():
					if _, err := typ.ElementPathType().Format(c.Path); err != nil {
						t.Fatalf("element path %x: %v", c.Path, err)
					}
					if _, err := typ.ElementValueType().Format(c.Value); err != nil {
						t.Fatalf("element value %x: %v", c.Value, err)
					}
				default:
					if _, err := typ.Format(c.Value); err != nil {
						t.Fatalf("value %x of %s: %v", c.Value, typ, err)
					}
				}
			}
		}
		rowsPer = append(rowsPer, n)
	}
}

func compareClustering(types []*cqltype.Type, a, b [][]byte) int {
	for i := range a {
		if c := types[i].Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// generate --partitions 40 writes, from every example profile of
// Cassandra's repository, an sstable that verifies, whose key, clustering,
// static and regular columns and types are the table's, and whose
// partitions hold the rows their cluster distributions allow.
func TestGenerateStressExamples(t *testing.T) {
	for _, c := range []struct {
		file     string
		min, max int
	}{
		{"cqlstress-example.yaml", 20, 160},
		{"cqlstress-counter-example.yaml", 1, 1},
		{"cqlstress-insanity-example.yaml", 1, 20},
		{"cqlstress-lwt-example.yaml", 1000, 1000},
		{"stress-example.yaml", 20, 500},
		{"stress-lwt-example.yaml", 1000, 1000},
	} {
		p := stressProfile(t, c.file, nil)
		p.Partitions = 40
		// The blog posts are 110 MB of incompressible text at 40
		// partitions: written uncompressed, they take a third of the time
		// (under -race, 2 s instead of 6); the other examples and the
		// testscript cover the LZ4 default.
		lwt := strings.Contains(c.file, "lwt")
		res, err := Generate(p, filepath.Join(t.TempDir(), "oa"), Options{Uncompressed: lwt})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if rep := verify.SSTable(res.DataPath, sstable.Options{}, nil); !rep.OK() {
			t.Fatalf("%s: %v", c.file, rep.Problems)
		}
		checkHeader(t, c.file, res.DataPath, p.Stress.Schema)
		rowsPer, counters := stressScan(t, res.DataPath)
		if int64(len(rowsPer)) != res.Partitions || res.Partitions > 40 || res.Partitions == 0 {
			t.Errorf("%s: %d partitions read, %d written", c.file, len(rowsPer), res.Partitions)
		}
		for _, n := range rowsPer {
			if n < c.min || n > c.max {
				t.Errorf("%s: a partition of %d rows, want %d..%d", c.file, n, c.min, c.max)
			}
		}
		if c.file == "cqlstress-counter-example.yaml" {
			// count's population is fixed(1): every increment is 1
			if len(counters) != len(rowsPer) || slices.ContainsFunc(counters, func(v int64) bool { return v != 1 }) {
				t.Errorf("counter totals %v", counters)
			}
		} else if len(counters) > 0 {
			t.Errorf("%s: counter cells in a table without counters", c.file)
		}
	}
}

// checkHeader compares the sstable's serialization header with the table.
func checkHeader(t *testing.T, file, path string, ts *cqltype.TableSchema) {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Stats().Header
	inKey := map[string]bool{}
	for _, k := range ts.PartitionKey {
		inKey[k] = true
	}
	for i, c := range ts.Clustering {
		inKey[c.Name] = true
		if got, want := h.ClusteringTypes[i].Class, ts.Column(c.Name).Type.Class; got != want {
			t.Errorf("%s: clustering %s is %s, want %s", file, c.Name, got, want)
		}
	}
	if len(h.ClusteringTypes) != len(ts.Clustering) {
		t.Errorf("%s: %d clustering types, want %d", file, len(h.ClusteringTypes), len(ts.Clustering))
	}
	if len(ts.PartitionKey) == 1 && h.KeyType.Class != ts.Column(ts.PartitionKey[0]).Type.Class {
		t.Errorf("%s: key type %s", file, h.KeyType.Class)
	}
	if len(ts.PartitionKey) > 1 {
		for _, k := range ts.PartitionKey {
			if !strings.Contains(h.KeyType.Class, ts.Column(k).Type.Class) || !strings.Contains(h.KeyType.Class, "CompositeType(") {
				t.Errorf("%s: key type %s lacks %s", file, h.KeyType.Class, k)
			}
		}
	}
	want := map[string]string{}
	for _, c := range ts.Columns {
		if !inKey[c.Name] {
			want[c.Name] = c.Type.Class
		}
	}
	got := map[string]string{}
	for _, c := range append(slices.Clone(h.RegularColumns), h.StaticColumns...) {
		got[string(c.Name)] = c.Type.Class
	}
	if len(got) != len(want) {
		t.Errorf("%s: header columns %v, want %v", file, got, want)
	}
	for n, class := range want {
		if got[n] != class {
			t.Errorf("%s: column %s is %q in the header, want %q", file, n, got[n], class)
		}
	}
}

// Over many partitions, the sstable's rows per partition reach both ends
// of cqlstress-example's 20..160 (date uniform(20..40) × lval uniform(1..4));
// the name population is widened from 10 to a million so that there are
// many partitions.
func TestGenerateStressRowsFollowCluster(t *testing.T) {
	p := stressProfile(t, "cqlstress-example.yaml", func(s string) string {
		return strings.Replace(s, "population: uniform(1..10)     #", "population: uniform(1..1M)     #", 1)
	})
	p.Partitions = 1500
	res, err := Generate(p, filepath.Join(t.TempDir(), "oa"), Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	rowsPer, _ := stressScan(t, res.DataPath)
	if len(rowsPer) < 1400 {
		t.Fatalf("%d partitions from 1500 seeds over a million names and two booleans", len(rowsPer))
	}
	lo, hi := slices.Min(rowsPer), slices.Max(rowsPer)
	if lo != 20 || hi != 160 {
		t.Errorf("rows per partition %d..%d over %d partitions, want 20..160", lo, hi, len(rowsPer))
	}
}

// The same profile and seed give the same bytes, in every format; a BTI
// table verifies too.
func TestGenerateStressDeterministicAndFormats(t *testing.T) {
	p := stressProfile(t, "cqlstress-insanity-example.yaml", nil)
	p.Partitions = 60
	tmp := t.TempDir()
	var first []byte
	for i, v := range []string{"oa", "oa", "nb", "da"} {
		var ver format.Version
		if v == "da" {
			var err error
			if ver, err = format.ParseFormatVersion(format.BTI, "da"); err != nil {
				t.Fatal(err)
			}
		} else {
			ver = format.MustVersion(v)
		}
		res, err := Generate(p, filepath.Join(tmp, v+string(rune('0'+i))), Options{Version: ver, Uncompressed: v == "nb"})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if rep := verify.SSTable(res.DataPath, sstable.Options{}, nil); !rep.OK() {
			t.Fatalf("%s: %v", v, rep.Problems)
		}
		b, err := os.ReadFile(res.DataPath)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if i == 1 && !bytes.Equal(first, b) {
			t.Error("two runs of one seed differ")
		}
	}
}

// A table whose only value columns are static: stress's UPDATE sets the
// statics alone, which makes a static row and no regular row; a table of
// key columns only gets rows with a row marker and no cell.
func TestGenerateStressStaticOnlyAndKeyOnly(t *testing.T) {
	for _, c := range []struct {
		table string
		rows  int64
	}{
		{"CREATE TABLE t (k int, c int, s text static, PRIMARY KEY (k, c))", 0},
		{"CREATE TABLE t (k int, c int, PRIMARY KEY (k, c))", 3 * 20},
	} {
		src := "keyspace: ks\ntable: t\ntable_definition: " + c.table + "\ncolumnspec:\n  - {name: c, cluster: fixed(3)}\n"
		p, err := workload.ParseProfile([]byte(src), "p.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p.Partitions = 20
		res, err := Generate(p, filepath.Join(t.TempDir(), "oa"), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.table, err)
		}
		if rep := verify.SSTable(res.DataPath, sstable.Options{}, nil); !rep.OK() {
			t.Fatalf("%s: %v", c.table, rep.Problems)
		}
		rowsPer, _ := stressScan(t, res.DataPath)
		total := 0
		for _, n := range rowsPer {
			total += n
		}
		if res.Rows != c.rows || int64(total) != c.rows || len(rowsPer) != 20 {
			t.Errorf("%s: %d partitions, %d rows written, %d read; want 20 and %d", c.table, len(rowsPer), res.Rows, total, c.rows)
		}
	}
}
