package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/workload"
)

// campaignTable writes the sstable of the reliability campaign (issue #9):
// generate --format oa --compression SnappyCompressor --profile
// wide-partitions --partitions 20 --chunk-length 4.
func campaignTable(t *testing.T) string { return wideTable(t, 20) }

// wideTable is the campaign's table with another partition count.
func wideTable(t *testing.T, partitions int64) string {
	t.Helper()
	p, ok := workload.Builtin("wide-partitions")
	if !ok {
		t.Fatal("no built-in wide-partitions profile")
	}
	p.Partitions = partitions
	res, err := generate.Generate(p, filepath.Join(t.TempDir(), "gen"), generate.Options{Version: format.MustVersion("oa"),
		Compression: &writer.Compression{Class: "SnappyCompressor", Options: map[string]string{}, ChunkLength: 4 << 10, MaxCompressedLength: 1<<31 - 1}})
	if err != nil {
		t.Fatal(err)
	}
	return res.DataPath
}

func flipBit(t *testing.T, path string, off int, bit uint) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	orig := append([]byte(nil), b...)
	b[off] ^= 1 << bit
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return orig
}

func problemsMention(r *Report, component, text string) bool {
	for _, p := range r.Problems {
		if p.Component == component && strings.Contains(p.Message, text) {
			return true
		}
	}
	return false
}

// The campaign's case: bit 1 of Index.db byte 893 lies in a promoted index
// block; verify passed it.
func TestCampaignIndexBlockFlip(t *testing.T) {
	data := campaignTable(t)
	if r := SSTable(data, sstable.Options{}, nil); !r.OK() {
		t.Fatalf("generated sstable does not verify: %v", r.Problems)
	}
	flipBit(t, strings.Replace(data, "Data.db", "Index.db", 1), 893, 1)
	for name, r := range map[string]*Report{
		"SSTable":                      SSTable(data, sstable.Options{}, nil),
		"SSTableChecksumsAndStructure": SSTableChecksumsAndStructure(data, sstable.Options{}),
	} {
		if r.OK() || !problemsMention(r, "Index.db", "promoted index") {
			t.Errorf("%s: flipped Index.db byte 893 bit 1: problems %v", name, r.Problems)
		}
	}
}

// Every bit of every Index.db byte of the campaign's table cut to two
// partitions (both with promoted indexes): each flip must be reported, and
// each flip inside a promoted index block must be reported as such. Before
// the block checks, 220 of the 10,800 single-bit flips of the 20-partition
// table passed (every one in a block's clustering header bits); with them
// none does (measured once over all 10,800).
func TestEveryIndexFlipIsCaught(t *testing.T) {
	data := wideTable(t, 2)
	ip := strings.Replace(data, "Data.db", "Index.db", 1)
	orig, err := os.ReadFile(ip)
	if err != nil {
		t.Fatal(err)
	}
	blockBytes := indexBlockBytes(t, data)
	if len(blockBytes) == 0 {
		t.Fatal("the campaign table has no promoted index")
	}
	step := 1
	if testing.Short() {
		step = 7
	}
	checked := 0
	for off := 0; off < len(orig); off += step {
		for bit := uint(0); bit < 8; bit++ {
			b := append([]byte(nil), orig...)
			b[off] ^= 1 << bit
			if err := os.WriteFile(ip, b, 0o644); err != nil {
				t.Fatal(err)
			}
			r := SSTableChecksumsAndStructure(data, sstable.Options{})
			if r.OK() {
				t.Fatalf("Index.db byte %d bit %d flipped: verify passed", off, bit)
			}
			if blockBytes[int64(off)] && !problemsMention(r, "Index.db", "") {
				t.Fatalf("Index.db byte %d bit %d (promoted index block) flipped: problems do not name Index.db: %v", off, bit, r.Problems)
			}
			checked++
		}
	}
	t.Logf("%d flips of %d bytes caught", checked, len(orig))
}

// indexBlockBytes marks the Index.db bytes that belong to promoted index
// blocks (not the entry heads or offsets tables).
func indexBlockBytes(t *testing.T, data string) map[int64]bool {
	s, err := sstable.Open(data, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[int64]bool{}
	sc := index.NewScanner(s.Index(), s.IndexCodec(), 0, true)
	for sc.Next() {
		e := sc.Entry()
		if !e.Indexed() {
			continue
		}
		// The blocks end where the offsets table (4 bytes a block) starts.
		end := sc.Pos() - 4*int64(len(e.Blocks))
		start := end
		for i := range e.Blocks {
			start -= int64(s.IndexCodec().BlockSize(&e.Blocks[i]))
		}
		for p := start; p < end; p++ {
			out[p] = true
		}
	}
	return out
}

// Blocks whose fields are all well-formed but do not match the rows,
// written with the project's encoder over a real fixture's entry: names
// swapped between blocks, or a boundary moved one byte into a row.
func TestIndexBlocksAgainstRows(t *testing.T) {
	cases := map[string]struct {
		damage func(b []index.Block)
		want   string
	}{
		"names": {func(b []index.Block) { b[1].FirstName, b[2].FirstName = b[2].FirstName, b[1].FirstName }, "block 1's first name"},
		"boundary": {func(b []index.Block) {
			b[1].Width--
			b[2].Offset--
			b[2].Width++
		}, "block 1 ends at partition byte"},
		"last name": {func(b []index.Block) { b[0].LastName = b[1].LastName }, "block 0's last name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := copyTable(t, fixtures.Table(t, "oa", "legacy_oa_clust"))
			data := filepath.Join(dir, "oa-1-big-Data.db")
			s, err := sstable.Open(data, sstable.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var out []byte
			sc := index.NewScanner(s.Index(), s.IndexCodec(), 0, true)
			changed := false
			for sc.Next() {
				e := sc.Entry()
				if e.Indexed() && !changed {
					tc.damage(e.Blocks)
					changed = true
				}
				if out, err = s.IndexCodec().Append(out, e); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			if !changed {
				t.Fatal("no indexed partition in legacy_oa_clust")
			}
			if err := os.WriteFile(filepath.Join(dir, "oa-1-big-Index.db"), out, 0o644); err != nil {
				t.Fatal(err)
			}
			r := SSTable(data, sstable.Options{}, nil)
			if !problemsMention(r, "Index.db", tc.want) {
				t.Fatalf("want a problem with %q, got %v", tc.want, r.Problems)
			}
		})
	}
}

// Real files from other writers (Cassandra 3.x, with range tombstone
// boundaries and end-open markers in their promoted indexes) raise no
// Index.db or Summary.db problem (a Summary.db missing from the folder is
// reported as missing, which is a different matter).
func TestPromotedIndexChecksAcceptRealFiles(t *testing.T) {
	root := filepath.Join(fixtures.Dir(t), "realworld", "scylla", "3.x", "uncompressed")
	for _, name := range []string{"read_range_tombstone_boundaries_index", "slicing_interleaved_rows_and_rts", "write_many_range_tombstones"} {
		data := filepath.Join(root, name, "mc-1-big-Data.db")
		if _, err := os.Stat(data); err != nil {
			t.Skipf("realworld fixture missing: %v", err)
		}
		r := SSTable(data, sstable.Options{}, nil)
		for _, p := range r.Problems {
			if p.Component == "Index.db" || p.Component == "Summary.db" && !strings.HasPrefix(p.Message, "missing") {
				t.Errorf("%s: %v", name, p)
			}
		}
		if !strings.Contains(strings.Join(r.Checks, ";"), "promoted index blocks") {
			t.Errorf("%s: index check did not run: %v", name, r.Checks)
		}
	}
}

// The campaign's case: 0x39 written at byte 46 of legacy_nc_clust's
// Summary.db changes its last key only.
func TestSummaryLastKey(t *testing.T) {
	dir := copyTable(t, fixtures.Table(t, "nc", "legacy_nc_clust"))
	p := filepath.Join(dir, "nc-1-big-Summary.db")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if b[46] == 0x39 {
		t.Fatal("fixture already holds 0x39 at byte 46")
	}
	b[46] = 0x39
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "nc-1-big-Data.db")
	for name, r := range map[string]*Report{
		"SSTable":                      SSTable(data, sstable.Options{}, nil),
		"SSTableChecksumsAndStructure": SSTableChecksumsAndStructure(data, sstable.Options{}),
	} {
		if !problemsMention(r, "Summary.db", "last key") {
			t.Errorf("%s: Summary.db last key changed: problems %v", name, r.Problems)
		}
	}
}

// An empty Filter.db is the always-present filter, which Cassandra writes
// only for bloom_filter_fp_chance 1.0; legacy_nc_clust's is 0.01.
func TestEmptyFilterWithFPChanceBelowOne(t *testing.T) {
	dir := copyTable(t, fixtures.Table(t, "nc", "legacy_nc_clust"))
	if err := os.WriteFile(filepath.Join(dir, "nc-1-big-Filter.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "nc-1-big-Data.db")
	r := SSTable(data, sstable.Options{}, nil)
	if !problemsMention(r, "Filter.db", "bloom_filter_fp_chance is 0.01") {
		t.Fatalf("empty Filter.db: problems %v", r.Problems)
	}
}
