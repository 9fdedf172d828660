package convert

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/verify"
	"github.com/sstabletool/sstabletool/workload"
)

// testGranularity is column_index_size in Cassandra's test configuration,
// which wrote the legacy fixtures (both their promoted indexes and their
// row index tries).
const testGranularity = 4 << 10

func daVersion(t testing.TB) format.Version {
	t.Helper()
	v, err := format.ParseFormatVersion(format.BTI, "da")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func components(t *testing.T, dataPath string) (format.Descriptor, []string) {
	t.Helper()
	d, _, err := format.ParseDescriptor(dataPath)
	if err != nil {
		t.Fatal(err)
	}
	toc, err := d.ReadTOC()
	if err != nil || len(toc) == 0 {
		t.Fatalf("%s: TOC %v %v", dataPath, toc, err)
	}
	return d, toc
}

func sameFile(t *testing.T, got, want string) bool {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s (%d bytes) differs from %s (%d bytes)", got, len(g), want, len(w))
		return false
	}
	return true
}

func verified(t *testing.T, dataPath string) {
	t.Helper()
	if rep := verify.SSTable(dataPath, sstable.Options{}, nil); !rep.OK() {
		t.Fatalf("verify %s: %v", dataPath, rep.Problems)
	}
}

// oa and da lay out Data.db the same, and Cassandra's legacy oa and da
// fixtures hold the same partitions at the same positions. Converting the
// real oa tables to da at the granularity Cassandra used must give the
// real da tables' Partitions.db, Rows.db and TOC.txt byte for byte, and
// leave every shared component as the oa source had it.
func TestConvertOAToDAMatchesCassandra(t *testing.T) {
	da := daVersion(t)
	for _, name := range []string{"simple", "clust"} {
		t.Run(name, func(t *testing.T) {
			src := dataPath(t, fixtures.Table(t, "oa", "legacy_oa_"+name))
			real := dataPath(t, fixtures.Table(t, "da", "legacy_da_"+name))
			res, err := Convert(src, filepath.Join(t.TempDir(), "da"), Options{To: da, Verify: true, ColumnIndexSize: testGranularity})
			if err != nil {
				t.Fatalf("convert: %v %v", err, res)
			}
			verified(t, res.Output)
			out, _ := components(t, res.Output)
			realDesc, _ := components(t, real)
			srcDesc, _ := components(t, src)
			for _, c := range []string{format.ComponentPartitions, format.ComponentRows, format.ComponentTOC} {
				if sameFile(t, out.Path(c), realDesc.Path(c)) {
					t.Logf("%s identical to Cassandra's da fixture", c)
				}
			}
			for _, c := range []string{format.ComponentData, format.ComponentStatistics, format.ComponentCompressionInfo, format.ComponentFilter, format.ComponentDigest} {
				sameFile(t, out.Path(c), srcDesc.Path(c))
			}
			for _, c := range []string{format.ComponentIndex, format.ComponentSummary} {
				if _, err := os.Stat(out.Path(c)); err == nil {
					t.Errorf("%s written for a da sstable", c)
				}
			}
			if len(res.Dropped) != 2 || res.Dropped[0].Name != format.ComponentIndex || res.Dropped[0].Before == 0 {
				t.Errorf("dropped components %+v, want Index.db and Summary.db", res.Dropped)
			}
		})
	}
}

// The other way: the real da tables converted to oa at Cassandra's
// granularity give the real oa tables' Index.db (promoted index blocks
// cut from the rows), Summary.db, Filter.db and TOC.txt; converted back,
// every component of the da fixture comes out byte for byte.
func TestConvertDAToOAMatchesCassandra(t *testing.T) {
	da := daVersion(t)
	for _, name := range []string{"simple", "clust"} {
		t.Run(name, func(t *testing.T) {
			src := dataPath(t, fixtures.Table(t, "da", "legacy_da_"+name))
			real := dataPath(t, fixtures.Table(t, "oa", "legacy_oa_"+name))
			tmp := t.TempDir()
			mid, err := Convert(src, filepath.Join(tmp, "oa"), Options{To: format.MustVersion("oa"), Verify: true, ColumnIndexSize: testGranularity})
			if err != nil {
				t.Fatalf("convert: %v %v", err, mid)
			}
			verified(t, mid.Output)
			out, _ := components(t, mid.Output)
			realDesc, _ := components(t, real)
			for _, c := range []string{format.ComponentIndex, format.ComponentSummary, format.ComponentFilter, format.ComponentTOC} {
				if sameFile(t, out.Path(c), realDesc.Path(c)) {
					t.Logf("%s identical to Cassandra's oa fixture", c)
				}
			}
			back, err := Convert(mid.Output, filepath.Join(tmp, "da"), Options{To: da, Verify: true, ColumnIndexSize: testGranularity})
			if err != nil {
				t.Fatal(err)
			}
			srcDesc, toc := components(t, src)
			backDesc, _ := components(t, back.Output)
			for _, c := range toc {
				sameFile(t, backDesc.Path(c), srcDesc.Path(c))
			}
		})
	}
}

// nb/nc -> da -> nb/nc: the relink to the compact layout plus the tries,
// and back. Data.db content and uncompressed bytes are the source's, and
// at the fixtures' granularity every component but TOC.txt (a set, listed
// in 5.0's order) is byte for byte the source's.
func TestRoundTripLegacyThroughDA(t *testing.T) {
	da := daVersion(t)
	for _, tc := range legacyTables {
		t.Run(tc.name, func(t *testing.T) {
			src := dataPath(t, fixtures.Table(t, tc.group, tc.name))
			from := format.MustVersion(tc.group)
			tmp := t.TempDir()
			mid, err := Convert(src, filepath.Join(tmp, "da"), Options{To: da, Verify: true, ColumnIndexSize: testGranularity})
			if err != nil {
				t.Fatalf("convert: %v %v", err, mid)
			}
			verified(t, mid.Output)
			if got, want := len(uncompressedData(t, src))-len(uncompressedData(t, mid.Output)), 11*int(mid.Partitions); got != want {
				t.Errorf("uncompressed Data.db shrank by %d bytes, want %d (11 per LIVE partition header)", got, want)
			}
			back, err := Convert(mid.Output, filepath.Join(tmp, "back"), Options{To: from, Verify: true, ColumnIndexSize: testGranularity})
			if err != nil {
				t.Fatal(err)
			}
			a, err := sstable.Open(src, sstable.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := sstable.Open(back.Output, sstable.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if err := SameContent(a, b); err != nil {
				t.Error(err)
			}
			if !bytes.Equal(uncompressedData(t, src), uncompressedData(t, back.Output)) {
				t.Error("uncompressed Data.db differs after the round trip")
			}
			srcDesc, toc := components(t, src)
			backDesc, backTOC := components(t, back.Output)
			for _, c := range toc {
				if c != format.ComponentTOC {
					sameFile(t, backDesc.Path(c), srcDesc.Path(c))
				}
			}
			if !cmp.Equal(sortedCopy(toc), sortedCopy(backTOC)) {
				t.Errorf("TOC %v, source %v", backTOC, toc)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Generated data has what the fixtures lack: partition deletions, range
// tombstones open across block edges (Rows.db open-deletion payloads,
// Index.db end-open markers), static rows. An oa table converted to da is
// exactly what the writer produces for the same data as da (both cut the
// blocks from the rows), the da table converts back to the oa one byte
// for byte, and the default granularities (16 KiB for da, 64 KiB for big)
// apply when none is given.
func TestConvertGeneratedThroughDA(t *testing.T) {
	p, _ := workload.Builtin("deletes")
	p.Partitions = 200
	p.RowsPerPartition = "uniform(1,400)"
	p.Mix.DeleteRange = 0.3
	p.Mix.DeletePartition = 0.1
	da := daVersion(t)
	tmp := t.TempDir()
	const granularity = 512
	genOA, err := generate.Generate(p, filepath.Join(tmp, "gen-oa"), generate.Options{Version: format.MustVersion("oa"), ColumnIndexSize: granularity})
	if err != nil {
		t.Fatal(err)
	}
	genDA, err := generate.Generate(p, filepath.Join(tmp, "gen-da"), generate.Options{Version: da, ColumnIndexSize: granularity})
	if err != nil {
		t.Fatal(err)
	}
	verified(t, genDA.DataPath)
	res, err := Convert(genOA.DataPath, filepath.Join(tmp, "da"), Options{To: da, Verify: true, ColumnIndexSize: granularity})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counts
	if c.NonLive[PlaceIndexEntry] == 0 || c.NonLive[PlaceIndexBlock] == 0 || c.BlocksWithoutMarker == 0 {
		t.Fatalf("expected non-LIVE partition deletions and open deletions in Rows.db, got %+v", c)
	}
	genDesc, toc := components(t, genDA.DataPath)
	outDesc, _ := components(t, res.Output)
	for _, comp := range toc {
		if comp != format.ComponentTOC { // convert keeps the source TOC's order
			sameFile(t, outDesc.Path(comp), genDesc.Path(comp))
		}
	}
	back, err := Convert(res.Output, filepath.Join(tmp, "oa"), Options{To: format.MustVersion("oa"), Verify: true, ColumnIndexSize: granularity})
	if err != nil {
		t.Fatal(err)
	}
	oaDesc, oaTOC := components(t, genOA.DataPath)
	backDesc, _ := components(t, back.Output)
	for _, comp := range oaTOC {
		if comp != format.ComponentTOC {
			sameFile(t, backDesc.Path(comp), oaDesc.Path(comp))
		}
	}

	// Default granularities: da's row index has blocks of 16 KiB, fewer
	// than at 512 bytes; back to oa at 64 KiB, fewer still.
	def, err := Convert(genOA.DataPath, filepath.Join(tmp, "da-default"), Options{To: da, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if def.Component(format.ComponentRows).After >= res.Component(format.ComponentRows).After {
		t.Errorf("Rows.db at 16 KiB is %d bytes, at 512 bytes %d", def.Component(format.ComponentRows).After, res.Component(format.ComponentRows).After)
	}
	verified(t, def.Output)
	s, err := sstable.Open(def.Output, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := blocksAtLeast(s, 16<<10); err != nil {
		t.Error(err)
	}
}

// blocksAtLeast checks that every row index block of a da sstable but
// each partition's last spans at least size bytes.
func blocksAtLeast(s *sstable.SSTable, size int64) error {
	it := s.Partitions().Iter()
	indexed := 0
	for ok := it.First(); ok; ok = it.Next() {
		e := it.Entry()
		if !e.InRowIndex() {
			continue
		}
		re, err := s.Rows().Entry(e.RowIndexPos())
		if err != nil {
			return err
		}
		blocks, _, err := s.Rows().Blocks(re)
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(blocks); i++ {
			if w := blocks[i+1].Offset - blocks[i].Offset; w < size {
				return fmt.Errorf("partition %x: block %d spans %d bytes, under %d", re.Key, i, w, size)
			}
		}
		indexed++
	}
	if indexed == 0 {
		return errors.New("no partition has a row index")
	}
	return it.Err()
}

// savings --to da: the estimate is what convert writes, component by
// component, and names the index components the target drops.
func TestEstimateMatchesConvertDA(t *testing.T) {
	da := daVersion(t)
	for _, src := range []string{
		dataPath(t, fixtures.Table(t, "nc", "legacy_nc_clust")),
		dataPath(t, fixtures.Table(t, "oa", "legacy_oa_clust_counter")),
		dataPath(t, fixtures.Table(t, "da", "legacy_da_clust")),
	} {
		to := da
		if filepath.Base(src)[:2] == "da" {
			to = format.MustVersion("oa")
		}
		o := Options{To: to}
		est, err := Estimate(src, o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Convert(src, filepath.Join(t.TempDir(), "o"), o)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(res.Components, est.Components); d != "" {
			t.Errorf("%s: estimate differs from what convert wrote (-written +estimated):\n%s", src, d)
		}
		if d := cmp.Diff(res.Dropped, est.Dropped); d != "" || len(est.Dropped) != 2 {
			t.Errorf("%s: dropped %+v vs %+v", src, est.Dropped, res.Dropped)
		}
		outDesc, _ := components(t, res.Output)
		for _, c := range est.Components {
			fi, err := os.Stat(outDesc.Path(c.Name))
			if err != nil || fi.Size() != c.After {
				t.Errorf("%s %s: estimated %d, file %v", src, c.Name, c.After, err)
			}
		}
	}
}

// Partitions.db and Rows.db are derived from Data.db like Summary.db and
// Filter.db: a da source without them (and without TOC.txt) converts to
// the same bytes as the intact one.
func TestConvertDAWithoutTries(t *testing.T) {
	srcDir := fixtures.Table(t, "da", "legacy_da_clust")
	stripped := copyDir(t, srcDir, "-Partitions.db", "-Rows.db", "-TOC.txt")
	o := Options{To: format.MustVersion("oa"), Verify: true, ColumnIndexSize: testGranularity}
	intact, err := Convert(filepath.Join(srcDir, "da-1-bti-Data.db"), filepath.Join(t.TempDir(), "intact"), o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Convert(filepath.Join(stripped, "da-1-bti-Data.db"), filepath.Join(t.TempDir(), "stripped"), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Partitions != 5 || len(res.Dropped) != 0 {
		t.Fatalf("%d partitions, dropped %v", res.Partitions, res.Dropped)
	}
	a, toc := components(t, intact.Output)
	b, _ := components(t, res.Output)
	for _, c := range toc {
		sameFile(t, b.Path(c), a.Path(c))
	}
}
