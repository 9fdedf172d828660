package bti

import (
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/reader"
)

func openFixturePartitions(t *testing.T, table string) *PartitionIndex {
	t.Helper()
	dir := fixtures.Table(t, "da", table)
	f, err := reader.Open(filepath.Join(dir, "da-1-bti-Partitions.db"), reader.Mmap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	pi, err := OpenPartitionsFile(f, token.ByteOrdered)
	if err != nil {
		t.Fatal(err)
	}
	return pi
}

func TestFixturePartitionsDump(t *testing.T) {
	for _, table := range []string{"legacy_da_simple", "legacy_da_clust"} {
		pi := openFixturePartitions(t, table)
		t.Logf("%s: root %d count %d keys@%d first %q last %q", table, pi.Root, pi.KeyCount, pi.KeysPos, pi.FirstKey, pi.LastKey)
		it := pi.Iter()
		for ok := it.First(); ok; ok = it.Next() {
			e := it.Entry()
			t.Logf("  %x -> pos %d hash %02x node %d", e.Prefix, e.Pos, e.Hash, e.NodePos)
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		st, err := pi.Stats()
		t.Logf("stats %+v %v", st, err)
	}
}
