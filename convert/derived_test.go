package convert

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/verify"
)

func copyDir(t *testing.T, src string, skip ...string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
next:
	for _, e := range ents {
		for _, s := range skip {
			if strings.HasSuffix(e.Name(), s) {
				continue next
			}
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// Summary.db, Filter.db, TOC.txt (and Digest.crc32) are derived from the
// data: convert writes them anew from what it writes, so a source without
// them converts to the very same files as the intact source, and the
// output verifies. Compressed (CompressionInfo.db) and uncompressed
// (CRC.db) outputs both.
func TestConvertRebuildsDerivedComponents(t *testing.T) {
	srcDir := fixtures.Table(t, "nc", "legacy_nc_clust")
	stripped := copyDir(t, srcDir, "-Summary.db", "-Filter.db", "-TOC.txt", "-Digest.crc32")
	for _, c := range []string{"Summary.db", "Filter.db", "TOC.txt", "Digest.crc32"} {
		if _, err := os.Stat(filepath.Join(stripped, "nc-1-big-"+c)); !os.IsNotExist(err) {
			t.Fatalf("%s not removed from the copy", c)
		}
	}
	to := format.MustVersion("oa")
	for _, uncompressed := range []bool{false, true} {
		o := Options{To: to, Verify: true, Uncompressed: uncompressed}
		intact, err := Convert(filepath.Join(srcDir, "nc-1-big-Data.db"), filepath.Join(t.TempDir(), "intact"), o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Convert(filepath.Join(stripped, "nc-1-big-Data.db"), filepath.Join(t.TempDir(), "stripped"), o)
		if err != nil {
			t.Fatalf("uncompressed %v: converting the stripped source: %v", uncompressed, err)
		}
		if r := verify.SSTable(got.Output, sstable.Options{}, nil); !r.OK() {
			t.Fatalf("uncompressed %v: output does not verify: %v", uncompressed, r.Problems)
		}
		id, _, _ := format.ParseDescriptor(intact.Output)
		gd, _, _ := format.ParseDescriptor(got.Output)
		want := []string{format.ComponentData, format.ComponentIndex, format.ComponentSummary, format.ComponentFilter,
			format.ComponentStatistics, format.ComponentDigest, format.ComponentTOC}
		if uncompressed {
			want = append(want, format.ComponentCRC)
		} else {
			want = append(want, format.ComponentCompressionInfo)
		}
		for _, c := range want {
			a, err := os.ReadFile(id.Path(c))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(gd.Path(c))
			if err != nil {
				t.Fatalf("uncompressed %v: %s not written: %v", uncompressed, c, err)
			}
			if c == format.ComponentTOC {
				continue // the order follows the source's TOC.txt when there is one
			}
			if !bytes.Equal(a, b) {
				t.Errorf("uncompressed %v: %s differs from the intact source's conversion (%d vs %d bytes)", uncompressed, c, len(b), len(a))
			}
		}
		toc, err := gd.ReadTOC()
		if err != nil || len(toc) != len(want) {
			t.Errorf("uncompressed %v: TOC %v (%v), want the %d components", uncompressed, toc, err, len(want))
		}
	}
}

// The source's Filter.db is not copied: a damaged one (all bits clear)
// still converts to the filter the keys give.
func TestConvertDoesNotCopyFilterBits(t *testing.T) {
	srcDir := fixtures.Table(t, "nc", "legacy_nc_clust")
	damaged := copyDir(t, srcDir)
	p := filepath.Join(damaged, "nc-1-big-Filter.db")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 8; i < len(b); i++ {
		b[i] = 0
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	to := format.MustVersion("oa")
	a, err := Convert(filepath.Join(srcDir, "nc-1-big-Data.db"), filepath.Join(t.TempDir(), "a"), Options{To: to})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Convert(filepath.Join(damaged, "nc-1-big-Data.db"), filepath.Join(t.TempDir(), "c"), Options{To: to, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	fa, _ := os.ReadFile(filepath.Join(filepath.Dir(a.Output), "oa-1-big-Filter.db"))
	fc, _ := os.ReadFile(filepath.Join(filepath.Dir(c.Output), "oa-1-big-Filter.db"))
	if len(fa) < 16 || !bytes.Equal(fa, fc) {
		t.Fatalf("filter from a damaged source's keys differs (%d vs %d bytes)", len(fc), len(fa))
	}
}

// An uncompressed source without CRC.db and Digest.crc32 (me, written by
// Cassandra 4.1) converts with both written anew, equal to what the intact
// source converts to.
func TestConvertRebuildsChecksums(t *testing.T) {
	srcDir := fixtures.Table(t, "me-collections", "table_with_boolean_set-9009a8a0a1c711eeae8c6d2c86545d91")
	src := dataPath(t, srcDir)
	stripped := copyDir(t, srcDir, "-CRC.db", "-Digest.crc32", "-TOC.txt")
	to := format.MustVersion("oa")
	a, err := Convert(src, filepath.Join(t.TempDir(), "a"), Options{To: to, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Convert(filepath.Join(stripped, filepath.Base(src)), filepath.Join(t.TempDir(), "b"), Options{To: to, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	ad, _, _ := format.ParseDescriptor(a.Output)
	bd, _, _ := format.ParseDescriptor(b.Output)
	for _, c := range []string{format.ComponentCRC, format.ComponentDigest, format.ComponentSummary, format.ComponentFilter} {
		x, err1 := os.ReadFile(ad.Path(c))
		y, err2 := os.ReadFile(bd.Path(c))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s: %v %v, equal %v", c, err1, err2, bytes.Equal(x, y))
		}
	}
}
