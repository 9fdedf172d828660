package convert

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
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
// (wide-partitions), converted with verification.
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
			res, err := Convert(gen.DataPath, filepath.Join(tmp, name), Options{To: format.MustVersion("oa"), Verify: true})
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
