package scrub

import (
	"testing"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
)

// A rewrite that repairs nothing (--to another version, or every fixture
// read through the salvage walk) keeps every cell: the output reads as the
// source does, cell by cell.
func TestRewriteKeepsContent(t *testing.T) {
	da, err := format.ParseFormatVersion(format.BTI, "da")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		src string
		to  format.Version
	}{
		{dataFileIn(t, fixtures.Table(t, "nc", "legacy_nc_clust")), format.MustVersion("oa")},
		{dataFileIn(t, fixtures.Table(t, "nc", "legacy_nc_clust_counter")), da},
		{dataFileIn(t, fixtures.Table(t, "da", "legacy_da_clust")), format.MustVersion("nc")},
		{dataFileIn(t, fixtures.Table(t, "me-collections", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91")), format.MustVersion("oa")},
		{generated(t, "demo", 200, "nc", generate.Options{}), format.MustVersion("oa")},
		{generated(t, "deletes", 200, "oa", generate.Options{}), da},
	}
	for _, c := range cases {
		rep, err := Scrub(c.src, t.TempDir(), Options{To: c.to})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if rep.Repaired() || !rep.Rewritten || len(rep.Outputs) != 1 {
			t.Fatalf("%s: repaired %v rewritten %v outputs %v: %+v", c.src, rep.Repaired(), rep.Rewritten, rep.Outputs, rep.Rows)
		}
		a, err := sstable.Open(c.src, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := sstable.Open(rep.Outputs[0], sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := convert.SameContent(a, b); err != nil {
			t.Errorf("%s -> %s: %v", c.src, c.to.Name, err)
		}
		a.Close()
		b.Close()
	}
}
