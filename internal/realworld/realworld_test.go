package realworld_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/verify"
)

// expectation is what the verifier must say about one realworld sstable
// (by its folder, relative to realworld/), and whether convert refuses it.
type expectation struct {
	// problems: one regexp-free substring per expected problem, matched
	// against "component: message"; the count must match exactly.
	problems []string
	// refuse: a substring of convert's error; "" means it must convert,
	// verify, and hold the same cells.
	refuse string
	// warnings: like problems, for the warnings (statistics wider than
	// the rows).
	warnings []string
}

var expected = map[string]expectation{
	"cassandra/negative-local-expiration/table3": {
		problems: []string{"Data.db: cell local deletion time", "Data.db: cell local deletion time", "Data.db: cell local deletion time",
			"Data.db: cell local deletion time", "Data.db: cell local deletion time", "Data.db: row local expiration time"},
		refuse: "sstablescrub",
	},
	"scylla/3.x/uncompressed/integrity_check/invalid_checksums": {
		problems: []string{"Data.db: expected chunk 1 (4345 bytes) to match CRC.db's CRC32", "Digest.crc32: CRC32 of Data.db"},
		refuse:   "checksum mismatch",
	},
	"scylla/3.x/uncompressed/integrity_check/invalid_digest": {
		// The data and CRC.db agree, so a conversion writes a sound sstable.
		problems: []string{"Digest.crc32: CRC32 of Data.db is 2974575251, Digest.crc32 says 2974575252"},
	},
	// ScyllaDB counts a complex column that holds no cell (only its
	// deletion) in totalColumnsSet; Rows.collectStats does not.
	"scylla/3.x/uncompressed/complex_column_zero_subcolumns": {problems: []string{"CRC.db: uncompressed Data.db without CRC.db"},
		warnings: []string{"Statistics.db: totalColumnsSet 70 is above Data.db's 35"}},
	"scylla/3.x/uncompressed/write_shadowable_deletion": {problems: []string{
		"TOC.txt: missing", "Summary.db: missing", "CRC.db: uncompressed Data.db without CRC.db"}},
	"scylla/3.x/uncompressed/read_missing_summary": {problems: []string{"Summary.db: missing (TOC.txt lists it)"}},
	"scylla/3.x/uncompressed/write_many_range_tombstones": {problems: []string{
		"TOC.txt: missing", "Summary.db: missing", "CRC.db: uncompressed Data.db without CRC.db"}},
	"scylla/3.x/uncompressed/write_static_row": {problems: []string{"CRC.db: uncompressed Data.db without CRC.db"}},
	"scylla/3.x/uncompressed/write_ttled_row":  {problems: []string{"CRC.db: uncompressed Data.db without CRC.db"}},
	"scylla/3.x/uncompressed/write_empty_counter": {problems: []string{
		"Statistics.db: EncodingStats min local deletion time delta 9223372035411895807 does not fit an int",
		"Statistics.db: EncodingStats min TTL 9223372036854775807 does not fit an int"}},
}

func realworldTables(t *testing.T) []string {
	root := filepath.Join(fixtures.Dir(t), "realworld")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no realworld sstables in %s", root)
	}
	paths, err := format.FindSSTables([]string{root}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 20 {
		t.Fatalf("found only %d sstables under %s", len(paths), root)
	}
	return paths
}

func rel(t *testing.T, data string) string {
	r, err := filepath.Rel(filepath.Join(fixtures.Dir(t), "realworld"), filepath.Dir(data))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(r)
}

// TestEveryRealWorldSSTableReads runs what metadata, dump, partitions,
// schema and browse run on every realworld sstable, in both access modes,
// and checks that dump's output is the same in both.
func TestEveryRealWorldSSTableReads(t *testing.T) {
	for _, p := range realworldTables(t) {
		name := rel(t, p)
		t.Run(name, func(t *testing.T) {
			var dumps [2][]byte
			for i, a := range []reader.Access{reader.Mmap, reader.Buffered} {
				s, err := sstable.Open(p, sstable.Options{Access: a})
				if err != nil {
					t.Fatalf("open (%v): %v", a, err)
				}
				if _, err := inspect.ReadMetadata(s); err != nil {
					t.Errorf("metadata: %v", err)
				}
				if stmt := inspect.CreateTable(s, inspect.DefaultNames(s)); !strings.HasPrefix(strings.TrimLeft(stmt, "-"), "CREATE TABLE") && !strings.Contains(stmt, "CREATE TABLE") {
					t.Errorf("schema: %q", stmt)
				}
				var buf bytes.Buffer
				d := dump.NewDumper(&buf, s, dump.Options{})
				d.Begin()
				err = s.EachPartition(d.Partition)
				if err == nil {
					err = d.End()
				}
				wantErr := strings.Contains(name, "invalid_checksums")
				if (err != nil) != wantErr {
					t.Errorf("dump: %v", err)
				}
				dumps[i] = buf.Bytes()
				n := 0
				err = s.ScanPartitions(sstable.ScanOptions{}, func(*sstable.PartitionSummary) error { n++; return nil })
				if (err != nil) != wantErr || (!wantErr && n == 0) {
					t.Errorf("partitions: %d partitions, %v", n, err)
				}
				s.Close()

				tb, err := catalog.Open(p, a)
				if err != nil {
					t.Fatalf("browse: %v", err)
				}
				if l, err := tb.ListPartitions(); err != nil || l.Len() == 0 {
					t.Errorf("browse: partition list %v, %v", l, err)
				}
				tb.Close()
			}
			if !bytes.Equal(dumps[0], dumps[1]) {
				t.Error("dump differs between mmap and buffered reads")
			}
		})
	}
}

// TestRealWorldVerifyNamesExactlyTheRealProblems: clean files verify clean,
// damaged ones report each of their problems and nothing else.
func TestRealWorldVerifyNamesExactlyTheRealProblems(t *testing.T) {
	for _, p := range realworldTables(t) {
		name := rel(t, p)
		t.Run(name, func(t *testing.T) {
			rep := verify.SSTable(p, sstable.Options{}, nil)
			var got []string
			for _, pr := range rep.Problems {
				got = append(got, pr.Component+": "+pr.Message)
			}
			sort.Strings(got)
			want := append([]string(nil), expected[name].problems...)
			sort.Strings(want)
			if len(got) != len(want) {
				t.Fatalf("problems:\n  %s\nwant %d:\n  %s", strings.Join(got, "\n  "), len(want), strings.Join(want, "\n  "))
			}
			for i := range want {
				if !strings.HasPrefix(got[i], want[i]) && !strings.Contains(got[i], want[i]) {
					t.Errorf("problem %q, want one containing %q", got[i], want[i])
				}
			}
			var warned []string
			for _, w := range rep.Warnings {
				warned = append(warned, w.Component+": "+w.Message)
			}
			if wantW := expected[name].warnings; len(warned) != len(wantW) {
				t.Errorf("warnings %q, want %q", warned, wantW)
			} else {
				for i := range wantW {
					if !strings.HasPrefix(warned[i], wantW[i]) {
						t.Errorf("warning %q, want one starting %q", warned[i], wantW[i])
					}
				}
			}
		})
	}
}

// TestRealWorldConvertsToOA converts every realworld sstable to oa (with
// verification: the output must verify and hold the same cells), except
// those the converter must refuse, which must say why.
func TestRealWorldConvertsToOA(t *testing.T) {
	oa := format.MustVersion("oa")
	for _, p := range realworldTables(t) {
		name := rel(t, p)
		t.Run(name, func(t *testing.T) {
			res, err := convert.Convert(p, t.TempDir(), convert.Options{To: oa, Verify: true})
			if want := expected[name].refuse; want != "" {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("convert: %v, want a refusal naming %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("convert: %v", err)
			}
			if !res.Verified {
				t.Fatal("output not verified")
			}
			// The estimate agrees with what was written, component by component.
			est, err := convert.Estimate(p, convert.Options{To: oa})
			if err != nil {
				t.Fatalf("estimate: %v", err)
			}
			for _, c := range res.Components {
				if e := est.Component(c.Name); e.After != c.After {
					t.Errorf("%s: estimate %d bytes, convert wrote %d", c.Name, e.After, c.After)
				}
			}
		})
	}
}
