package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
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
				if raceEnabled && bit != i%8 {
					continue // one bit of each byte, in turn (CI's budget)
				}
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
		flips := 8 * len(orig)
		if raceEnabled {
			flips = len(orig)
		}
		t.Logf("%s: %d of %d flips not caught", comp, missed, flips)
		if missed > 0 {
			t.Errorf("%s: %d of %d single-bit flips pass verify", comp, missed, flips)
		}
	}
}

// demoBTITable writes what `generate --format da --partitions 300` writes.
func demoBTITable(t *testing.T) string {
	t.Helper()
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 300
	v, err := format.ParseFormatVersion(format.BTI, "da")
	if err != nil {
		t.Fatal(err)
	}
	res, err := generate.Generate(p, filepath.Join(t.TempDir(), "gen"), generate.Options{Version: v})
	if err != nil {
		t.Fatal(err)
	}
	return res.DataPath
}

// Damage to Partitions.db that loses a partition, or moves its pointer, is
// reported at Partitions.db bytes, and the rest of the checks still run:
// the rebuild names the damaged byte.
func TestBTIPartitionsDamageNamesItsByte(t *testing.T) {
	data := demoBTITable(t)
	if r := SSTable(data, sstable.Options{}, nil); !r.OK() {
		t.Fatalf("generated table: %v", r.Problems)
	}
	parts := filepath.Join(filepath.Dir(data), "da-1-bti-Partitions.db")
	for _, tc := range []struct {
		off  int
		bit  uint
		want []Problem // Offset and the start of the message
	}{
		// A child pointer of the node at 2105 (for key bytes 40 ff) moved
		// by one: the last two partitions have no entry.
		{2107, 0, []Problem{
			{Component: "Partitions.db", Offset: 2105, Message: "no entry for the partition of key 3233323539623934663133636635343431617162 at Data.db byte 1223162: a lookup stops at this node"},
			{Component: "Partitions.db", Offset: 2107, Message: "differs from what Cassandra's trie writer produces"},
		}},
		// The node header at byte 7 gains payload bits: the walk in key
		// order meets that node's payload first (pointing into Rows.db),
		// a lookup goes on to the first partition's entry at byte 0.
		{7, 0, []Problem{
			{Component: "Partitions.db", Offset: 7, Message: "a lookup of key 3938643238343865363835653562653669786431 finds the entry at byte 0 (pointing at Data.db byte 0), expected this one (pointing at Rows.db byte 9)"},
			{Component: "Rows.db", Offset: 9, Message: "a partition key of 63494 bytes inside the file (reached from Partitions.db's entry at byte 7)"},
			{Component: "Partitions.db", Offset: 7, Message: "differs from what Cassandra's trie writer produces"},
		}},
		// A Rows.db position moved: Rows.db is blamed, with the entry
		// that led there.
		{3, 6, []Problem{
			{Component: "Rows.db", Offset: 512, Message: "a partition key of 32801 bytes inside the file (reached from Partitions.db's entry at byte 3)"},
			{Component: "Partitions.db", Offset: 3, Message: "differs from what Cassandra's trie writer produces"},
		}},
	} {
		orig := flipBit(t, parts, tc.off, tc.bit)
		r := SSTable(data, sstable.Options{}, nil)
		os.WriteFile(parts, orig, 0o644)
		for _, w := range tc.want {
			found := false
			for _, p := range r.Problems {
				found = found || p.Component == w.Component && p.Offset == w.Offset && strings.HasPrefix(p.Message, w.Message)
			}
			if !found {
				t.Errorf("byte %d bit %d: no %s problem at byte %d %q in %v", tc.off, tc.bit, w.Component, w.Offset, w.Message, r.Problems)
			}
		}
		for _, p := range r.Problems {
			if p.Offset < 0 {
				t.Errorf("byte %d bit %d: a problem without an offset: %v", tc.off, tc.bit, p)
			}
		}
	}
}
