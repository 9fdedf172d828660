package inspect

import (
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

func open(t *testing.T, group, name, file string) *sstable.SSTable {
	t.Helper()
	s, err := sstable.Open(filepath.Join(fixtures.Table(t, group, name), file), sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// legacy_da_clust holds the rows of legacy_oa_clust, written by Cassandra
// as BTI: Rows.db has an entry for every partition, with as many blocks as
// the oa sstable's Index.db has promoted index blocks for it (both cut the
// partition every column_index_size). Partitions.db holds the five keys.
func TestTrieFacts(t *testing.T) {
	da := open(t, "da", "legacy_da_clust", "da-1-bti-Data.db")
	m, err := ReadMetadata(da)
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary != nil {
		t.Errorf("a BTI sstable shows Summary.db facts: %+v", m.Summary)
	}
	pi := m.PartitionIndex
	if pi == nil || pi.KeyCount != 5 || pi.FirstKey != "0" || pi.LastKey != "4" || pi.Trie.Keys != 5 {
		t.Fatalf("partition index %+v, want 5 keys from 0 to 4", pi)
	}
	var nodes int64
	for _, n := range pi.Trie.NodeTypes {
		nodes += n
	}
	if nodes != pi.Trie.Nodes || pi.Trie.BytesPerKey <= 0 {
		t.Errorf("partition trie: node types sum to %d of %d nodes, %.1f bytes per key", nodes, pi.Trie.Nodes, pi.Trie.BytesPerKey)
	}

	oa := open(t, "oa", "legacy_oa_clust", "oa-1-big-Data.db")
	var blocks int64
	for _, k := range []string{"0", "1", "2", "3", "4"} {
		e, ok, err := oa.Find([]byte(k))
		if err != nil || !ok {
			t.Fatalf("oa key %s: %v %v", k, ok, err)
		}
		blocks += int64(len(e.Blocks))
	}
	ri := m.RowIndex
	if ri == nil || ri.Entries != 5 || ri.Blocks != blocks || ri.MinBlocks*5 > blocks || ri.MaxBlocks*5 < blocks {
		t.Fatalf("row index %+v, want 5 entries and the %d blocks of the oa Index.db", ri, blocks)
	}
	if m.KeyRange == nil || m.KeyRange.FirstToken != "30" || m.KeyRange.LastToken != "34" {
		t.Errorf("key range %+v", m.KeyRange)
	}

	// A big-format sstable has Summary.db facts and no trie facts.
	mo, err := ReadMetadata(oa)
	if err != nil {
		t.Fatal(err)
	}
	if mo.Summary == nil || mo.PartitionIndex != nil || mo.RowIndex != nil {
		t.Errorf("oa: summary %v, partition index %v, row index %v", mo.Summary, mo.PartitionIndex, mo.RowIndex)
	}
}

// Scan agrees with the sstable package's own partition walk on what both
// count the same way: partitions, rows with the static row, and bytes.
func TestScanAgreesWithPartitionScan(t *testing.T) {
	for _, c := range []struct{ group, name, file string }{
		{"nc", "legacy_nc_clust", "nc-1-big-Data.db"},
		{"da", "legacy_da_clust", "da-1-bti-Data.db"},
		{"me-collections", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91", "me-1-big-Data.db"},
	} {
		s := open(t, c.group, c.name, c.file)
		info, err := Scan(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		var parts, rows, bytes, maxSize int64
		err = s.ScanPartitions(sstable.ScanOptions{}, func(p *sstable.PartitionSummary) error {
			parts++
			rows += p.Rows
			bytes += p.Size
			maxSize = max(maxSize, p.Size)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if info.Partitions != parts || info.Rows != rows || bytes != info.Size || info.PartitionSize.Count != parts || info.PartitionSize.Max != maxSize {
			t.Errorf("%s: scan %d partitions, %d rows, %d bytes (max %d); partition walk %d, %d, %d (max %d)",
				c.name, info.Partitions, info.Rows, info.Size, info.PartitionSize.Max, parts, rows, bytes, maxSize)
		}
		if len(info.Widest) != min(5, int(parts)) || info.Widest[0].Value < info.Widest[len(info.Widest)-1].Value {
			t.Errorf("%s: widest %v", c.name, info.Widest)
		}
	}
}
