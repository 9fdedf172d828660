package convert

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/verify"
	"github.com/sstabletool/sstabletool/workload"
)

var legacyTables = []struct{ group, name, oa string }{
	{"nc", "legacy_nc_clust", "legacy_oa_clust"},
	{"nc", "legacy_nc_clust_counter", "legacy_oa_clust_counter"},
	{"nc", "legacy_nc_simple", "legacy_oa_simple"},
	{"nc", "legacy_nc_simple_counter", "legacy_oa_simple_counter"},
	{"nb", "legacy_nb_clust", "legacy_oa_clust"},
	{"nb", "legacy_nb_clust_counter", "legacy_oa_clust_counter"},
	{"nb", "legacy_nb_simple", "legacy_oa_simple"},
	{"nb", "legacy_nb_simple_counter", "legacy_oa_simple_counter"},
}

func dataPath(t *testing.T, dir string) string {
	t.Helper()
	paths, err := format.FindSSTables([]string{dir}, false)
	if err != nil || len(paths) != 1 {
		t.Fatalf("sstables in %s: %v %v", dir, paths, err)
	}
	return paths[0]
}

func uncompressedData(t *testing.T, path string) []byte {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := make([]byte, s.Data().Length())
	if _, err := s.Data().ReadAt(b, 0); err != nil && s.Data().Length() > 0 {
		t.Fatal(err)
	}
	return b
}

func TestConvertLegacyToOA(t *testing.T) {
	for _, tc := range legacyTables {
		t.Run(tc.name, func(t *testing.T) {
			src := dataPath(t, fixtures.Table(t, tc.group, tc.name))
			real := dataPath(t, fixtures.Table(t, "oa", tc.oa))
			out := filepath.Join(t.TempDir(), "out")
			res, err := Convert(src, out, Options{To: format.MustVersion("oa"), Verify: true})
			if err != nil {
				t.Fatalf("convert: %v (problems %v)", err, res)
			}
			if !res.Verified {
				t.Fatal("not verified")
			}
			rep := verify.SSTable(res.Output, sstable.Options{}, nil)
			if !rep.OK() {
				t.Fatalf("verify: %v", rep.Problems)
			}
			// Every component the real oa sstable has is there.
			realDesc, _, _ := format.ParseDescriptor(real)
			outDesc, _, _ := format.ParseDescriptor(res.Output)
			realTOC, _ := realDesc.ReadTOC()
			outTOC, _ := outDesc.ReadTOC()
			if !cmp.Equal(realTOC, outTOC, cmpopts.SortSlices(func(a, b string) bool { return a < b })) {
				t.Errorf("TOC %v, real oa has %v", outTOC, realTOC)
			}
			for _, c := range realTOC {
				if _, err := os.Stat(outDesc.Path(c)); err != nil {
					t.Errorf("component %s missing: %v", c, err)
				}
			}
			srcData, outData := uncompressedData(t, src), uncompressedData(t, res.Output)
			if got, want := len(srcData)-len(outData), 11*int(res.Partitions); got != want {
				t.Errorf("uncompressed Data.db shrank by %d bytes, want %d (11 per partition)", got, want)
			}
			for _, c := range res.Components {
				if fi, err := os.Stat(outDesc.Path(c.Name)); err != nil || fi.Size() != c.After {
					t.Errorf("%s: result says %d bytes after, file has %v (%v)", c.Name, c.After, fi.Size(), err)
				}
			}
			// Where the logical data is the same as the real oa fixture's,
			// the bytes are too.
			if bytes.Equal(outData, uncompressedData(t, real)) {
				for _, c := range []string{format.ComponentData, format.ComponentCompressionInfo, format.ComponentDigest,
					format.ComponentIndex, format.ComponentSummary, format.ComponentFilter, format.ComponentStatistics, format.ComponentTOC} {
					want, _ := os.ReadFile(realDesc.Path(c))
					got, _ := os.ReadFile(outDesc.Path(c))
					if !bytes.Equal(got, want) {
						t.Errorf("%s differs from the real oa one (%d vs %d bytes)", c, len(got), len(want))
					}
				}
				t.Logf("uncompressed Data.db identical to the real oa fixture")
			} else {
				t.Logf("logical data differs from %s (written separately); sizes %d vs %d", tc.oa, len(outData), len(uncompressedData(t, real)))
			}
			if tc.name == "legacy_nc_clust" {
				if c := res.Component(format.ComponentIndex); c.After != 157498 {
					t.Errorf("Index.db is %d bytes, want 157,498", c.After)
				}
			}
			// Content equal: independent decode of both.
			a, _ := sstable.Open(src, sstable.Options{})
			b, _ := sstable.Open(res.Output, sstable.Options{})
			defer a.Close()
			defer b.Close()
			if err := SameContent(a, b); err != nil {
				t.Error(err)
			}
			t.Logf("losses: %v", res.Losses)
		})
	}
}

// The partition size histogram moved each partition by the bytes it lost:
// it equals the one Cassandra wrote for the real oa table of the same data.
func TestConvertStatsMatchRealOA(t *testing.T) {
	src := dataPath(t, fixtures.Table(t, "nc", "legacy_nc_clust"))
	real := dataPath(t, fixtures.Table(t, "oa", "legacy_oa_clust"))
	res, err := Convert(src, filepath.Join(t.TempDir(), "o"), Options{To: format.MustVersion("oa")})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := stats.ReadFile(strings.Replace(real, "Data.db", "Statistics.db", 1), format.MustVersion("oa"))
	if err != nil {
		t.Fatal(err)
	}
	got, want := res.stats.Stats, rs.Stats
	if d := cmp.Diff(want.PartitionSizes, got.PartitionSizes); d != "" {
		t.Errorf("partition sizes (-real +converted):\n%s", d)
	}
	t.Logf("ratio %v vs real %v", got.CompressionRatio, want.CompressionRatio)
	ignore := cmpopts.IgnoreFields(stats.Stats{}, "MinTimestamp", "MaxTimestamp", "MinLocalDeletionTime", "MaxLocalDeletionTime", "CompressionRatio", "OriginatingHostID", "CommitLogUpperBound", "CommitLogLowerBound", "CommitLogIntervals", "TombstoneDropTimes")
	if d := cmp.Diff(want, got, ignore, cmpopts.EquateNaNs(), cmpopts.IgnoreFields(stats.TypeName{}, "Type")); d != "" {
		t.Logf("stats differ beyond write-time fields (-real +converted):\n%s", d)
	}
}

// oa -> nc -> oa reproduces every component of every real oa fixture byte
// for byte: compressed Data.db, CompressionInfo.db and Digest.crc32
// included, since chunks are compressed exactly as liblz4 does
// (internal/lz4fast), and so Statistics.db's compression ratio survives too.
func TestRoundTripOA(t *testing.T) {
	for _, name := range []string{"legacy_oa_clust", "legacy_oa_clust_counter", "legacy_oa_simple", "legacy_oa_simple_counter"} {
		t.Run(name, func(t *testing.T) {
			src := dataPath(t, fixtures.Table(t, "oa", name))
			tmp := t.TempDir()
			mid, err := Convert(src, filepath.Join(tmp, "nc"), Options{To: format.MustVersion("nc"), Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(mid.Losses) > 0 {
				t.Logf("oa->nc losses: %v", mid.Losses)
			}
			back, err := Convert(mid.Output, filepath.Join(tmp, "oa"), Options{To: format.MustVersion("oa"), Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(uncompressedData(t, src), uncompressedData(t, back.Output)) {
				t.Error("uncompressed Data.db differs after the round trip")
			}
			sd, _, _ := format.ParseDescriptor(src)
			bd, _, _ := format.ParseDescriptor(back.Output)
			for _, c := range []string{format.ComponentData, format.ComponentCompressionInfo, format.ComponentDigest,
				format.ComponentIndex, format.ComponentSummary, format.ComponentFilter, format.ComponentStatistics, format.ComponentTOC} {
				want, _ := os.ReadFile(sd.Path(c))
				got, _ := os.ReadFile(bd.Path(c))
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs after the round trip (%d vs %d bytes)", c, len(got), len(want))
				}
			}
			v := format.MustVersion("oa")
			want, err := stats.ReadFile(sd.Path(format.ComponentStatistics), v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := stats.ReadFile(bd.Path(format.ComponentStatistics), v)
			if err != nil {
				t.Fatal(err)
			}
			gb, err := got.Encode(v)
			if err != nil {
				t.Fatal(err)
			}
			wb, _ := os.ReadFile(sd.Path(format.ComponentStatistics))
			if !bytes.Equal(gb, wb) {
				t.Errorf("Statistics.db differs after the round trip:\n%s",
					cmp.Diff(want, got, cmpopts.EquateNaNs(), cmpopts.IgnoreFields(stats.TypeName{}, "Type")))
			}
		})
	}
}

// Estimate (what savings runs) predicts exactly the sizes Convert writes,
// compressed Data.db included, and counts the DeletionTimes the same way.
func TestEstimateMatchesConvert(t *testing.T) {
	for _, tc := range legacyTables {
		src := dataPath(t, fixtures.Table(t, tc.group, tc.name))
		o := Options{To: format.MustVersion("oa")}
		est, err := Estimate(src, o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Convert(src, filepath.Join(t.TempDir(), "o"), o)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(res.Components, est.Components); d != "" {
			t.Errorf("%s: estimate differs from what convert wrote (-written +estimated):\n%s", tc.name, d)
		}
		if res.Counts != est.Counts || est.Counts.Live[PlacePartitionHeader] != est.Partitions {
			t.Errorf("%s: counts %+v vs %+v", tc.name, est.Counts, res.Counts)
		}
		// The uncompressed saving is exactly 11 bytes per LIVE partition
		// header, and equals the converted Data.db's real length.
		if got := int64(len(uncompressedData(t, res.Output))); est.DataUncompressed.After != got ||
			est.DataUncompressed.Before-est.DataUncompressed.After != 11*est.Partitions {
			t.Errorf("%s: uncompressed Data.db %+v, converted file holds %d", tc.name, est.DataUncompressed, got)
		}
		outDesc, _, _ := format.ParseDescriptor(res.Output)
		for _, c := range est.Components {
			fi, err := os.Stat(outDesc.Path(c.Name))
			if err != nil || fi.Size() != c.After {
				t.Errorf("%s %s: estimated %d, file %v", tc.name, c.Name, c.After, err)
			}
		}
	}
}

// Uncompressed sstables (me, Murmur3, old bloom filter format) survive
// me -> oa -> me byte for byte in every component but Statistics.db, CRC.db
// and the digest included: the chunk checksums are recomputed, not copied.
func TestRoundTripUncompressedME(t *testing.T) {
	for _, src := range fixtures.DataFiles(t) {
		if !strings.Contains(src, "me-collections") {
			continue
		}
		tmp := t.TempDir()
		mid, err := Convert(src, filepath.Join(tmp, "oa"), Options{To: format.MustVersion("oa"), Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		back, err := Convert(mid.Output, filepath.Join(tmp, "me"), Options{To: format.MustVersion("me"), Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		sd, _, _ := format.ParseDescriptor(src)
		bd, _, _ := format.ParseDescriptor(back.Output)
		for _, c := range []string{format.ComponentData, format.ComponentCRC, format.ComponentDigest, format.ComponentIndex, format.ComponentSummary, format.ComponentFilter} {
			want, err := os.ReadFile(sd.Path(c))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(bd.Path(c))
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %s differs after me->oa->me", filepath.Base(filepath.Dir(src)), c)
			}
		}
	}
}

// Generated data has what the fixtures lack: partition deletions, row and
// range tombstones, and promoted index blocks with end-open markers (a
// small column index size). nc -> oa -> nc reproduces every byte, and the
// DeletionTime counts see the non-LIVE values.
func TestRoundTripGeneratedDeletions(t *testing.T) {
	p, _ := workload.Builtin("deletes")
	p.Partitions = 300
	p.RowsPerPartition = "uniform(1,400)"
	p.Mix.DeleteRange = 0.3
	p.Mix.DeletePartition = 0.1
	tmp := t.TempDir()
	gen, err := generate.Generate(p, filepath.Join(tmp, "gen"), generate.Options{Version: format.MustVersion("nc"), ColumnIndexSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	mid, err := Convert(gen.DataPath, filepath.Join(tmp, "oa"), Options{To: format.MustVersion("oa"), Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	c := mid.Counts
	if c.NonLive[PlacePartitionHeader] == 0 || c.NonLive[PlaceIndexEntry] == 0 || c.NonLive[PlaceIndexBlock] == 0 {
		t.Fatalf("expected non-LIVE deletion times in every place, got %+v", c)
	}
	back, err := Convert(mid.Output, filepath.Join(tmp, "nc"), Options{To: format.MustVersion("nc"), Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(uncompressedData(t, gen.DataPath), uncompressedData(t, back.Output)) {
		t.Error("uncompressed Data.db differs after nc -> oa -> nc")
	}
	gd, _, _ := format.ParseDescriptor(gen.DataPath)
	bd, _, _ := format.ParseDescriptor(back.Output)
	for _, comp := range []string{format.ComponentData, format.ComponentCompressionInfo, format.ComponentIndex, format.ComponentSummary, format.ComponentFilter, format.ComponentStatistics, format.ComponentDigest} {
		want, _ := os.ReadFile(gd.Path(comp))
		got, _ := os.ReadFile(bd.Path(comp))
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs after nc -> oa -> nc", comp)
		}
	}
	t.Logf("counts %+v; oa saves %d bytes of Data.db (uncompressed)", c, len(uncompressedData(t, gen.DataPath))-len(uncompressedData(t, mid.Output)))
}

// rewriteChanged writes src again as oa through writer.SSTableWriter with
// one cell value changed in partition k, so the content differs there only.
func rewriteChanged(t *testing.T, src *sstable.SSTable, k int64, dir string) string {
	t.Helper()
	schema := *src.Schema()
	schema.Version = format.MustVersion("oa")
	w, err := writer.NewSSTableWriter(dir, writer.Config{Version: schema.Version, Header: src.Stats().Header,
		Schema: &schema, Partitioner: src.Stats().Validation.Partitioner, Compression: writer.CompressionFrom(src.Data().Info())})
	if err != nil {
		t.Fatal(err)
	}
	d := src.Decoder(0)
	var h rows.PartitionHeader
	changed := false
	for n := int64(0); d.ReadPartitionHeader(&h) == nil; n++ {
		if err := w.StartPartition(h.Key, h.Deletion); err != nil {
			t.Fatal(err)
		}
		for {
			u, err := d.Next(false)
			if err != nil {
				t.Fatal(err)
			}
			if u == nil {
				break
			}
			if n == k && !changed && len(u.Cells) > 0 && len(u.Cells[0].Value) > 0 {
				v := bytes.Clone(u.Cells[0].Value)
				v[0]++
				u.Cells[0].Value = v
				changed = true
			}
			if u.Kind == rows.KindStaticRow {
				err = w.AddStatic(u)
			} else {
				err = w.Add(u)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := w.EndPartition(); err != nil {
			t.Fatal(err)
		}
	}
	if !changed {
		t.Fatalf("partition %d has no cell to change", k)
	}
	p, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The comparison on its own (compareWith: for a trie-indexed output, and
// whenever verify's walk cannot carry it) compares in two halves at once,
// cut at a partition boundary: a difference on either side of the cut is
// found, and a cut that is not the same partition boundary in both
// sstables fails instead of skipping content.
func TestCompareHalves(t *testing.T) {
	p, _ := workload.Builtin("deletes")
	p.Partitions = 200
	tmp := t.TempDir()
	gen, err := generate.Generate(p, filepath.Join(tmp, "gen"), generate.Options{Version: format.MustVersion("nc")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Convert(gen.DataPath, filepath.Join(tmp, "oa"), Options{To: format.MustVersion("oa"), Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	src, err := sstable.Open(gen.DataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cut := middlePartition(t, src, res.Output)
	if cut.n == 0 || cut.n >= res.Partitions {
		t.Fatalf("no cut inside the sstable: %+v of %d partitions", cut, res.Partitions)
	}
	o := Options{}
	changed := map[int64]string{}
	for _, byFrames := range []bool{false, true} {
		if err := compareWith(src, res.Output, o, cut, byFrames); err != nil {
			t.Fatalf("by frames %v: the real output differs: %v", byFrames, err)
		}
		for _, k := range []int64{0, cut.n - 1, cut.n, res.Partitions - 1} {
			if changed[k] == "" {
				changed[k] = rewriteChanged(t, src, k, filepath.Join(tmp, fmt.Sprint("changed", k)))
			}
			err := compareWith(src, changed[k], o, cut, byFrames)
			if err == nil || !strings.Contains(err.Error(), "differs") {
				t.Errorf("by frames %v: a cell changed in partition %d (cut at %d): got %v", byFrames, k, cut.n, err)
			}
		}
		for _, bad := range []boundary{{cut.a, cut.b + 1, cut.n}, {cut.a + 1, cut.b, cut.n}, {cut.a, cut.b, cut.n + 1}, {cut.a, cut.b, res.Partitions + 1}} {
			if err := compareWith(src, res.Output, o, bad, byFrames); err == nil {
				t.Errorf("by frames %v: cut %+v (the real one is %+v) passed", byFrames, bad, cut)
			}
		}
	}
}

// middlePartition is the boundary of the middle partition of src and its
// conversion out.
func middlePartition(t *testing.T, src *sstable.SSTable, out string) boundary {
	t.Helper()
	o, err := sstable.Open(out, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var offsets [2][]int64
	for i, s := range []*sstable.SSTable{src, o} {
		if err := s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(ps *sstable.PartitionSummary) error {
			offsets[i] = append(offsets[i], ps.Offset)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	n := len(offsets[0]) / 2
	return boundary{a: offsets[0][n], b: offsets[1][n], n: int64(n)}
}
