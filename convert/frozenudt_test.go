package convert

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/testtables"
)

// A 3.x table with a top-level frozen UDT (its header says UserType(...),
// CASSANDRA-15035) converts to 4.0+ versions, whose readers trust the
// header: the output's header must say FrozenType(UserType(...)), since
// the copied row bodies hold the UDT as one cell without a path. Before
// the fix the output failed its own verification ("expected cell path").
// The non-frozen table keeps its UserType header.
func TestConvertFrozenUDTHeader(t *testing.T) {
	for _, frozen := range []bool{true, false} {
		src := testtables.UDTTable(t, frozen, true)
		want := infoCells(t, src)
		da, err := format.ParseFormatVersion(format.BTI, "da")
		if err != nil {
			t.Fatal(err)
		}
		for _, to := range []format.Version{format.MustVersion("oa"), format.MustVersion("nb"), da} {
			res, err := Convert(src, filepath.Join(t.TempDir(), to.Name), Options{To: to, Verify: true})
			if err != nil {
				t.Fatalf("frozen=%v: mc -> %s: %v", frozen, to.Name, err)
			}
			out, err := sstable.Open(res.Output, sstable.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var class string
			for _, c := range out.Stats().Header.RegularColumns {
				if string(c.Name) == "info" {
					class = c.Type.Class
				}
			}
			if got := strings.HasPrefix(class, "org.apache.cassandra.db.marshal.FrozenType(") && strings.Contains(class, testtables.UDTClass); got != frozen {
				t.Errorf("frozen=%v: mc -> %s: output header records info as %s", frozen, to.Name, class)
			}
			if fixes := out.HeaderFixes(); len(fixes) != 0 {
				t.Errorf("frozen=%v: mc -> %s: the output still needs header fixes: %v", frozen, to.Name, fixes)
			}
			out.Close()
			if got := infoCells(t, res.Output); got != want {
				t.Errorf("frozen=%v: mc -> %s: info cells %s, source %s", frozen, to.Name, got, want)
			}
		}
	}
}

// infoCells renders the "info" cells of every row: path and value bytes.
func infoCells(t *testing.T, path string) string {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b strings.Builder
	err = s.EachPartition(func(h *rows.PartitionHeader, d *rows.Decoder) error {
		for {
			u, err := d.Next(false)
			if err != nil || u == nil {
				return err
			}
			for _, c := range u.Cells {
				if s.Schema().Regular[c.Column].Name == "info" {
					fmt.Fprintf(&b, "path %x value %x; ", c.Path, c.Value)
				}
			}
		}
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b.String()
}
