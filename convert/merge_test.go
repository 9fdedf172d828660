package convert

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/verify"
	"github.com/sstabletool/sstabletool/workload"
)

// historyTable writes a generated flush history of n sstables in version
// v and opens it as a merged table.
func historyTable(t testing.TB, profile string, v format.Version, n int, seed uint64) (*merge.Table, int64) {
	return historyTableOf(t, profile, v, n, seed, 60)
}

func historyTableOf(t testing.TB, profile string, v format.Version, n int, seed uint64, partitions int64) (*merge.Table, int64) {
	t.Helper()
	p, err := workload.ParseProfile([]byte(profile), "test")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = partitions
	dir := filepath.Join(t.TempDir(), "ks", "hist-0123456789abcdef0123456789abcdef")
	res, err := generate.GenerateHistory(p, dir, generate.HistoryOptions{SSTables: n, Options: generate.Options{Version: v, Seed: seed}})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := merge.Open(res.DataPaths, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl, res.Now
}

func version(t testing.TB, name string) format.Version {
	t.Helper()
	v, err := parseVersion(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func parseVersion(name string) (format.Version, error) {
	if name < "ma" {
		return format.ParseFormatVersion(format.BTI, name)
	}
	return format.ParseVersion(name)
}

// The estimate is what Merge writes, component by component, on
// histories of several versions, to several versions, compressed or not,
// with and without purging; the output verifies, and the reclaimed bytes'
// reasons add up to Data.db's reduction.
func TestEstimateMergeMatchesWritten(t *testing.T) {
	deflate := &writer.Compression{Class: "DeflateCompressor", Options: map[string]string{}, ChunkLength: 4 << 10}
	for _, tc := range []struct {
		from, to string
		profile  string
		comp     *writer.Compression
		none     bool
		purge    bool
		later    int64
	}{
		{from: "oa", to: "oa", profile: generate.HistoryProfile},
		{from: "oa", to: "nb", profile: generate.HistoryProfile, purge: true},
		{from: "nb", to: "da", profile: generate.HistoryProfile, later: 40 * 86400},
		{from: "da", to: "oa", profile: generate.HistoryProfile, none: true, purge: true, later: 40 * 86400},
		{from: "oa", to: "da", profile: generate.HistoryProfile, comp: deflate, purge: true},
		{from: "nc", to: "oa", profile: generate.CounterHistoryProfile},
	} {
		name := fmt.Sprintf("%s->%s purge=%v", tc.from, tc.to, tc.purge)
		tbl, now := historyTable(t, tc.profile, version(t, tc.from), 4, 7)
		o := MergeOptions{To: version(t, tc.to), Compression: tc.comp, Uncompressed: tc.none, Verify: true,
			Merge: merge.Options{Now: now + tc.later, Purge: tc.purge, GCGraceSeconds: 2 * 86400}}
		est, err := EstimateMerge(tbl, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := t.TempDir()
		got, err := Merge(tbl, out, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !got.Verified {
			t.Fatalf("%s: not verified", name)
		}
		if diff := cmp.Diff(got.Components, est.Components); diff != "" {
			t.Errorf("%s: components (-written +estimated):\n%s", name, diff)
		}
		if diff := cmp.Diff(got.Dropped, est.Dropped); diff != "" {
			t.Errorf("%s: dropped (-written +estimated):\n%s", name, diff)
		}
		for _, c := range got.Components {
			if fs := fileSize(filepath.Join(out, format.Descriptor{Version: o.To, Generation: "5"}.Prefix()+c.Name)); fs != c.After {
				t.Errorf("%s: %s is %d bytes on disk, the result says %d", name, c.Name, fs, c.After)
			}
		}
		if got.DataUncompressed != est.DataUncompressed || got.Partitions != est.Partitions {
			t.Errorf("%s: data %+v/%+v, partitions %d/%d", name, got.DataUncompressed, est.DataUncompressed, got.Partitions, est.Partitions)
		}
		r := est.Reclaimed
		if r == nil || r.Total() != est.DataUncompressed.Before-est.DataUncompressed.After {
			t.Fatalf("%s: reclaimed %+v does not add up to %d", name, r, est.DataUncompressed.Before-est.DataUncompressed.After)
		}
		if r.Overwritten <= 0 {
			t.Errorf("%s: nothing overwritten: %+v", name, r)
		}
		if tc.profile == generate.HistoryProfile && (r.ShadowedByPartitionDeletion <= 0 || r.ShadowedByRowDeletion <= 0 || r.ShadowedByCollectionDelete <= 0) {
			t.Errorf("%s: a history's deletions shadow nothing: %+v", name, r)
		}
		if tc.purge && r.Purged <= 0 {
			t.Errorf("%s: purging reclaims nothing: %+v", name, r)
		}
		if tc.later > 0 && !tc.purge && r.Expired <= 0 {
			t.Errorf("%s: 40 days on, no TTL expired: %+v", name, r)
		}
		found := filepath.Join(out, format.Descriptor{Version: o.To, Generation: "5"}.Prefix()+format.ComponentData)
		if got.Output != filepath.Join(out, filepath.Base(found)) {
			t.Errorf("%s: output %s, want %s", name, got.Output, found)
		}
		if rep := verify.SSTable(got.Output, sstable.Options{}, nil); !rep.OK() {
			t.Errorf("%s: %v", name, rep.Problems)
		}
		t.Logf("%s: %d -> %d bytes of Data.db; reclaimed %+v", name, got.DataUncompressed.Before, got.DataUncompressed.After, *r)
	}
}

// A merged conversion killed anywhere through the FS seam leaves no
// visible partial output and an untouched table, and the next run repairs
// and finishes it, as a conversion does (crashAnywhereIn).
func TestMergeCrashAnywhere(t *testing.T) {
	for _, to := range []string{"oa", "da"} {
		t.Run(to, func(t *testing.T) {
			tbl, now := historyTable(t, generate.HistoryProfile, version(t, "oa"), 3, 2)
			o := MergeOptions{To: version(t, to), Merge: merge.Options{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds}}
			crashAnywhereIn(t, tbl.Dir().Dir, 30, func(fsys vfs.FS, out string, verify bool) (*Result, error) {
				o := o
				o.Verify = verify
				return mergeOn(fsys, tbl, out, o)
			})
		})
	}
}
