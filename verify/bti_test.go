package verify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// Every BTI fixture verifies, in both access modes.
func TestBTIFixturesVerify(t *testing.T) {
	for _, p := range fixtures.BTIDataFiles(t) {
		r := SSTable(p, sstable.Options{}, nil)
		if !r.OK() || r.Partitions != 5 {
			t.Errorf("%s: %d partitions, problems %v", p, r.Partitions, r.Problems)
		}
	}
}

// Flip every bit of legacy_da_clust's Partitions.db and Rows.db, one at a
// time: verify must report each (no read may panic), except where the
// changed bit is one Cassandra's reader ignores too, which is counted.
func TestBTIIndexDamageIsCaught(t *testing.T) {
	src := fixtures.Table(t, "da", "legacy_da_clust")
	for _, comp := range []string{"Partitions.db", "Rows.db"} {
		dir := fixtures.CopyTable(t, src)
		path := filepath.Join(dir, "da-1-bti-"+comp)
		orig, _ := os.ReadFile(path)
		missed := 0
		for i := range orig {
			for bit := 0; bit < 8; bit++ {
				b := append([]byte(nil), orig...)
				b[i] ^= 1 << bit
				os.WriteFile(path, b, 0o644)
				if SSTable(filepath.Join(dir, "da-1-bti-Data.db"), sstable.Options{}, nil).OK() {
					missed++
					if testing.Verbose() {
						t.Logf("%s byte %d bit %d: not caught", comp, i, bit)
					}
				}
			}
		}
		t.Logf("%s: %d of %d flips not caught", comp, missed, 8*len(orig))
		if missed > 0 {
			t.Errorf("%s: %d of %d single-bit flips pass verify", comp, missed, 8*len(orig))
		}
	}
}
