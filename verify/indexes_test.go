package verify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/testindexes"
	"github.com/sstabletool/sstabletool/verify"
)

// withIndexes copies a real sstable and writes beside it a complete SAI
// build (index val_sai) and, on Murmur3 tables, a SASI index (val_sasi)
// of the text column col, in the layouts of Cassandra's writers
// (internal/testindexes). It returns the Data.db path and the index
// component names.
func withIndexes(t *testing.T, group, table, col string, clustering bool) (string, []string) {
	t.Helper()
	dir := fixtures.CopyTable(t, fixtures.Table(t, group, table))
	m, _ := filepath.Glob(filepath.Join(dir, "*-Data.db"))
	data := m[0]
	names, err := testindexes.SAI(data, clustering, "val_sai")
	if err != nil {
		t.Fatal(err)
	}
	if col != "" {
		n, err := testindexes.SASI(data, "val_sasi", col)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	// Cassandra lists each in TOC.txt as it writes it.
	toc := strings.Replace(data, "Data.db", "TOC.txt", 1)
	b, _ := os.ReadFile(toc)
	for _, n := range names {
		b = append(b, n+"\n"...)
	}
	if err := os.WriteFile(toc, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return data, names
}

func TestIndexComponentsVerify(t *testing.T) {
	data, names := withIndexes(t, "me-collections", "utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91", "val", false)
	r := verify.SSTable(data, sstable.Options{}, nil)
	if !r.OK() || len(r.Notes) > 0 {
		t.Fatalf("problems %v, notes %v", r.Problems, r.Notes)
	}
	if c := r.Checks[len(r.Checks)-1]; !strings.Contains(c, "SAI, SASI") {
		t.Errorf("checks %v", r.Checks)
	}
	prefix := strings.TrimSuffix(data, "Data.db")
	// A byte flipped in any index file (the middle of it, and its first
	// and last byte) fails verify, naming the file and the index.
	for _, n := range names {
		p := prefix + n
		orig, _ := os.ReadFile(p)
		if len(orig) == 0 {
			continue // GroupComplete: an empty marker
		}
		for _, at := range []int{0, len(orig) / 2, len(orig) - 1} {
			b := append([]byte(nil), orig...)
			b[at] ^= 0x04
			os.WriteFile(p, b, 0o644)
			r := verify.SSTable(data, sstable.Options{}, nil)
			os.WriteFile(p, orig, 0o644)
			if len(r.Problems) != 1 || r.Problems[0].Component != n {
				t.Errorf("%s byte %d flipped: problems %v", n, at, r.Problems)
				continue
			}
			want := "SAI index val_sai is damaged"
			switch {
			case strings.HasPrefix(n, "SI_"):
				want = "SASI index val_sasi is damaged"
			case !strings.Contains(n, "val_sai"):
				want = "SAI's per-sstable components (shared by every SAI index of the table) is damaged"
			}
			if !strings.Contains(r.Problems[0].Message, want) {
				t.Errorf("%s byte %d flipped: %q, want %q", n, at, r.Problems[0].Message, want)
			}
		}
	}
	// A missing file of a finished build fails; a missing ColumnComplete
	// marker is a build Cassandra redoes: a note.
	os.Rename(prefix+"SAI+aa+val_sai+TermsData.db", prefix+"x")
	r = verify.SSTable(data, sstable.Options{}, nil)
	if len(r.Problems) != 2 { // TOC.txt lists it; the build needs it
		t.Errorf("TermsData missing: %v", r.Problems)
	}
	os.Rename(prefix+"x", prefix+"SAI+aa+val_sai+TermsData.db")
	os.Remove(prefix + "SAI+aa+val_sai+ColumnComplete.db")
	r = verify.SSTable(data, sstable.Options{}, nil)
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0].Message, "builds its index at startup") {
		t.Errorf("ColumnComplete missing: notes %v, problems %v", r.Notes, r.Problems)
	}
}

// A wide table (clustering columns) needs the wide per-sstable set.
func TestSAIWideComponents(t *testing.T) {
	data, _ := withIndexes(t, "nc", "legacy_nc_clust", "", true)
	if r := verify.SSTable(data, sstable.Options{}, nil); !r.OK() {
		t.Fatalf("problems %v", r.Problems)
	}
	p := strings.Replace(data, "Data.db", "SAI+aa+ClusteringKeyBlocks.db", 1)
	os.Remove(p)
	r := verify.SSTable(data, sstable.Options{}, nil)
	found := false
	for _, pr := range r.Problems {
		found = found || strings.Contains(pr.Message, "where GroupComplete says the build finished")
	}
	if !found {
		t.Errorf("problems %v", r.Problems)
	}
}
