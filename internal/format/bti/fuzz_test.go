package bti

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
)

func fixtureComponent(component string) [][]byte {
	root := fixtures.Root()
	if root == "" {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(root, "cassandra", "da", "*", "*-"+component))
	var out [][]byte
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// FuzzPartitions opens arbitrary bytes as Partitions.db and uses every
// reading path: it must return entries or a *corrupt.Error, never
// panic or loop.
func FuzzPartitions(f *testing.F) {
	for _, b := range fixtureComponent(format.ComponentPartitions) {
		f.Add(b, []byte("2"))
	}
	var buf bytes.Buffer
	w := NewPartitionsWriter(&buf, token.Murmur3)
	for i := 0; i < 50; i++ {
		w.AddData([]byte{byte(i), byte(i * 7)}, int64(i*100))
	}
	w.Finish()
	f.Add(buf.Bytes(), []byte{3, 21})
	f.Fuzz(func(t *testing.T, b []byte, key []byte) {
		pi, err := OpenPartitions(trie.BytesSource(b), "fuzz", token.ByteOrdered)
		if err != nil {
			return
		}
		pi.Trie().MaxDepth = 4096
		it := pi.Iter()
		for ok := it.First(); ok; ok = it.Next() {
			_ = it.Entry()
		}
		it.SeekKey(key)
		pi.Candidate(key)
		pi.Stats()
	})
}

// FuzzRows reads arbitrary bytes as Rows.db: an entry at pos, its blocks,
// a floor lookup and statistics.
func FuzzRows(f *testing.F) {
	for _, b := range fixtureComponent(format.ComponentRows) {
		for _, pos := range []int64{93, 193, 295, 397, 499} {
			f.Add(b, pos, []byte{0x40, 0x31, 0x35})
		}
	}
	v, _ := format.ParseFormatVersion(format.BTI, "da")
	f.Fuzz(func(t *testing.T, b []byte, pos int64, key []byte) {
		ri := OpenRows(trie.BytesSource(b), "fuzz", v)
		e, err := ri.Entry(pos)
		if err != nil {
			return
		}
		blocks, end, err := ri.Blocks(e)
		if err == nil && (len(blocks) != e.BlockCount || (len(blocks) > 0 && end.Offset <= blocks[len(blocks)-1].Offset)) {
			t.Fatalf("%d blocks for a count of %d, end %d", len(blocks), e.BlockCount, end.Offset)
		}
		ri.Floor(e, key)
		ri.Stats(e)
	})
}
