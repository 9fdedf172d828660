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
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// TestSegmentedCopySameBytes: the segmented copy (workers relink into
// memory, the calling goroutine writes) writes the bytes of the one
// relinker, which relinks every partition a worker leaves to it: with no
// partition held in memory (every one relinked by copyOne) and with some
// (a bound of 2 KiB), every component of the output is the same, on
// tables of several segments with static rows and range tombstones
// (deletes) and with promoted indexes whose blocks are moved
// (wide-partitions). (Unverified: the bytes are the check, and the
// verification of each copy is held elsewhere.)
func TestSegmentedCopySameBytes(t *testing.T) {
	for _, c := range []struct {
		profile    string
		partitions int64
	}{{"deletes", 3000}, {"wide-partitions", 40}} {
		p, ok := workload.Builtin(c.profile)
		if !ok {
			t.Fatalf("no %s profile", c.profile)
		}
		p.Partitions = c.partitions
		tmp := t.TempDir()
		gen, err := generate.Generate(p, filepath.Join(tmp, "gen"), generate.Options{Version: format.MustVersion("nc")})
		if err != nil {
			t.Fatal(err)
		}
		s, err := sstable.Open(gen.DataPath, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := s.Data().Length()
		s.Close()
		if n < 2*sstable.DefaultSegmentSize {
			t.Fatalf("%s: %d bytes of Data.db, too few for segments", c.profile, n)
		}
		convert := func(name string, inMemory int) map[string][]byte {
			saved := relinkInMemory
			defer func() { relinkInMemory = saved }()
			relinkInMemory = inMemory
			res, err := Convert(gen.DataPath, filepath.Join(tmp, name), Options{To: format.MustVersion("oa")})
			if err != nil {
				t.Fatalf("%s, %s: %v", c.profile, name, err)
			}
			files := map[string][]byte{}
			for _, comp := range res.Components {
				b, err := os.ReadFile(filepath.Join(tmp, name, "oa-1-big-"+comp.Name))
				if err != nil {
					t.Fatal(err)
				}
				files[comp.Name] = b
			}
			return files
		}
		want := convert("serial", 0)
		for _, tc := range []struct {
			name     string
			inMemory int
		}{{"bounded", 2 << 10}, {"default", relinkInMemory}} {
			got := convert(tc.name, tc.inMemory)
			if len(got) != len(want) {
				t.Errorf("%s, %s: %d components, want %d", c.profile, tc.name, len(got), len(want))
			}
			for name, b := range want {
				if !bytes.Equal(got[name], b) {
					t.Errorf("%s, %s: %s differs from the one relinker's", c.profile, tc.name, name)
				}
			}
		}
	}
}

// TestIndexDisagreementRefused: a source whose Index.db lists a partition
// more than Data.db holds (its last entry twice), or one fewer (its last
// entry cut off), is refused with the Index.db or Data.db position, by
// the segmented copy and by the one relinker (a granularity asked for).
func TestIndexDisagreementRefused(t *testing.T) {
	p, ok := workload.Builtin("deletes")
	if !ok {
		t.Fatal("no deletes profile")
	}
	p.Partitions = 300
	gen, err := generate.Generate(p, filepath.Join(t.TempDir(), "gen"), generate.Options{Version: format.MustVersion("nc")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(gen.DataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scan := index.NewScanner(s.Index(), s.IndexCodec(), 0, false)
	var lastEntry int64
	for scan.Next() {
		lastEntry = scan.EntryPos()
	}
	s.Close()
	idxPath := strings.TrimSuffix(gen.DataPath, "Data.db") + "Index.db"
	idx, err := os.ReadFile(idxPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		index      []byte
	}{
		{"an entry too many", "Index.db", append(append([]byte(nil), idx...), idx[lastEntry:]...)},
		{"an entry too few", "no partition beyond those Index.db lists", idx[:lastEntry]},
	} {
		dir := fixtures.CopyTable(t, filepath.Dir(gen.DataPath))
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(idxPath)), c.index, 0o644); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, filepath.Base(gen.DataPath))
		for _, o := range []Options{{To: format.MustVersion("oa")}, {To: format.MustVersion("oa"), ColumnIndexSize: 64 << 10}} {
			_, err := Convert(src, filepath.Join(t.TempDir(), "out"), o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, column index size %d: got %v, want an error naming %q", c.name, o.ColumnIndexSize, err, c.want)
			}
		}
	}
}
