package verify

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/reader"
)

func TestEveryFixtureVerifies(t *testing.T) {
	for _, p := range fixtures.DataFiles(t) {
		for _, a := range []reader.Access{reader.Mmap, reader.Buffered} {
			r := SSTable(p, sstable.Options{Access: a}, nil)
			if !r.OK() {
				t.Errorf("%s (%v): %v", p, a, r.Problems)
			}
			if r.Partitions == 0 || len(r.Checks) < 5 {
				t.Errorf("%s: %d partitions, checks %v", p, r.Partitions, r.Checks)
			}
		}
	}
}

func copyTable(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func dumpAll(path string, a reader.Access) ([]byte, error) {
	s, err := sstable.Open(path, sstable.Options{Access: a})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var buf bytes.Buffer
	d := dump.NewDumper(&buf, s, dump.Options{JSONLines: true})
	if err := s.EachPartition(d.Partition); err != nil {
		return nil, err
	}
	err = d.End()
	return buf.Bytes(), err
}

// Flipping any one byte of compressed Data.db (chunk bytes or their CRC)
// must make verify fail and reading report a checksum error, in both
// access modes, instead of returning garbage.
func TestEveryCorruptByteIsCaught(t *testing.T) {
	src := fixtures.Table(t, "nc", "legacy_nc_clust")
	dir := copyTable(t, src)
	data := filepath.Join(dir, "nc-1-big-Data.db")
	orig, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	step := 37
	if testing.Short() {
		step = 211
	}
	for off := 0; off < len(orig); off += step {
		b := append([]byte(nil), orig...)
		b[off] ^= 0x5A
		if err := os.WriteFile(data, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r := SSTable(data, sstable.Options{}, nil)
		if r.OK() {
			t.Fatalf("byte %d flipped: verify passed", off)
		}
		for _, a := range []reader.Access{reader.Mmap, reader.Buffered} {
			_, err := dumpAll(data, a)
			if err == nil || !strings.Contains(err.Error(), "CRC32") {
				t.Fatalf("byte %d flipped (%v): dump error %v, want a CRC32 mismatch", off, a, err)
			}
		}
	}
}

func TestDumpIdenticalInBothAccessModes(t *testing.T) {
	for _, p := range fixtures.DataFiles(t) {
		m, err := dumpAll(p, reader.Mmap)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		b, err := dumpAll(p, reader.Buffered)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !bytes.Equal(m, b) || len(m) == 0 {
			t.Fatalf("%s: mmap and buffered dumps differ (%d vs %d bytes)", p, len(m), len(b))
		}
	}
}

func TestDamagedComponentsAreReported(t *testing.T) {
	src := fixtures.Table(t, "oa", "legacy_oa_clust")
	cases := map[string]func(dir string){
		"Index.db": func(dir string) {
			p := filepath.Join(dir, "oa-1-big-Index.db")
			b, _ := os.ReadFile(p)
			b[0] ^= 0xFF // the first key's length
			os.WriteFile(p, b, 0o644)
		},
		// A truncated entry after the last partition's: the scan ends on
		// an error, not on the end of the file.
		"Index.db trailing bytes": func(dir string) {
			p := filepath.Join(dir, "oa-1-big-Index.db")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, 0x00, 0x04, 'k'), 0o644)
		},
		"Digest.crc32": func(dir string) {
			os.WriteFile(filepath.Join(dir, "oa-1-big-Digest.crc32"), []byte("12345"), 0o644)
		},
		"Statistics.db": func(dir string) {
			p := filepath.Join(dir, "oa-1-big-Statistics.db")
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x01
			os.WriteFile(p, b, 0o644)
		},
		"Filter.db": func(dir string) {
			p := filepath.Join(dir, "oa-1-big-Filter.db")
			b, _ := os.ReadFile(p)
			for i := 12; i < len(b); i++ {
				b[i] = 0
			}
			os.WriteFile(p, b, 0o644)
		},
	}
	for component, damage := range cases {
		dir := copyTable(t, src)
		damage(dir)
		// The skimming variant convert uses must catch the same damage.
		data := filepath.Join(dir, "oa-1-big-Data.db")
		for variant, r := range map[string]*Report{
			"SSTable":                      SSTable(data, sstable.Options{}, nil),
			"SSTableChecksumsAndStructure": SSTableChecksumsAndStructure(data, sstable.Options{}),
		} {
			if r.OK() {
				t.Fatalf("%s damaged: %s passed", component, variant)
			}
			found := false
			for _, p := range r.Problems {
				name, _, _ := strings.Cut(component, " ")
				if strings.Contains(p.Component, name) || strings.Contains(p.Message, name) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s damaged: %s's problems do not name it: %v", component, variant, r.Problems)
			}
		}
	}
}

// A flipped byte in a compressed chunk is a CRC problem for the skimming
// variant too: it reads every chunk even though it decodes no cell.
func TestSkimmingVerifyCatchesChunkDamage(t *testing.T) {
	dir := copyTable(t, fixtures.Table(t, "nc", "legacy_nc_clust"))
	data := filepath.Join(dir, "nc-1-big-Data.db")
	b, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := SSTableChecksumsAndStructure(data, sstable.Options{})
	if r.OK() {
		t.Fatal("a damaged chunk passed")
	}
	if !strings.Contains(fmt.Sprint(r.Problems), "CRC32") {
		t.Fatalf("problems do not name the checksum: %v", r.Problems)
	}
}
