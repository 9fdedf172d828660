package trie

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// fixtureTries returns the real BTI index files (Partitions.db with the root
// from its footer, Rows.db with the position of its first trie's root),
// when the fixtures are present.
func fixtureTries(tb testing.TB) (files [][]byte, roots []int64) {
	root := fixtures.Root()
	if root == "" {
		return nil, nil
	}
	paths, _ := filepath.Glob(filepath.Join(root, "cassandra", "da", "*", "*-Partitions.db"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 24 {
			continue
		}
		files = append(files, b)
		roots = append(roots, int64(binary.BigEndian.Uint64(b[len(b)-8:])))
	}
	paths, _ = filepath.Glob(filepath.Join(root, "cassandra", "da", "*", "*-Rows.db"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		files = append(files, b)
		roots = append(roots, 89) // legacy_da_clust: the first partition's trie root
	}
	return files, roots
}

// FuzzParseNode decodes arbitrary bytes as a node and exercises every
// accessor: no panic, sizes within the input, children strictly before
// the node.
func FuzzParseNode(f *testing.F) {
	files, _ := fixtureTries(f)
	for _, b := range files {
		for i := 0; i < len(b); i += 3 {
			f.Add(b[i:], int64(i))
		}
	}
	f.Add([]byte{0xA0, 0x30, 0x04, 0x00, 0xF0, 0x0C, 0x00, 0x90, 0x06, 0x00, 0x30}, int64(15))
	f.Add([]byte{0xF0, 0x00, 0xFF}, int64(1<<40))
	f.Fuzz(func(t *testing.T, b []byte, pos int64) {
		if pos < 0 {
			pos = -pos
		}
		n, err := ParseNode(b, pos)
		if err != nil {
			return
		}
		if n.Size() > len(b) || n.PayloadPos() != pos+int64(n.Size()) {
			t.Fatalf("node of %d bytes from %d", n.Size(), len(b))
		}
		for i := 0; i < n.TransitionRange(); i++ {
			c, ok, err := n.Child(i)
			if err == nil && ok && (c < 0 || c >= pos) {
				t.Fatalf("child %d at %d, node at %d", i, c, pos)
			}
			if tb := n.TransitionByte(i); tb < 0 || tb > 255 {
				t.Fatalf("transition byte %d", tb)
			}
		}
		for c := -1; c < 256; c++ {
			if i := n.Search(c); i >= n.TransitionRange() || i < -n.TransitionRange()-1 {
				t.Fatalf("Search(%d) = %d of %d slots", c, i, n.TransitionRange())
			}
		}
	})
}

// FuzzReader walks arbitrary bytes as a trie file: iteration, floor,
// seeks, first/last and statistics must end with a result or an error.
func FuzzReader(f *testing.F) {
	files, roots := fixtureTries(f)
	for i, b := range files {
		f.Add(b, roots[i], []byte{0x40, 0x32})
	}
	data, root := buildTrie(f, [][]byte{[]byte("a"), []byte("ab"), []byte("b"), bytes.Repeat([]byte("c"), 300)}, 0)
	f.Add(data, root, []byte("ab"))
	f.Fuzz(func(t *testing.T, b []byte, root int64, key []byte) {
		r, err := NewReader(BytesSource(b), root, "fuzz", "trie")
		if err != nil {
			return
		}
		r.MaxDepth = 4096
		it := r.NewIterator()
		var prev []byte
		for ok, n := it.First(), 0; ok; ok, n = it.Next(), n+1 {
			if n > 0 && bytes.Compare(it.Key(), prev) <= 0 {
				t.Fatalf("keys out of order: %x after %x", it.Key(), prev)
			}
			prev = append(prev[:0], it.Key()...)
		}
		it.SeekGE(key)
		it.SeekPrefixGE(key)
		r.Floor(key)
		r.Lower(key)
		r.Follow(key)
		r.First()
		r.Last()
		r.Stats(func(*Node) (int, error) { return 0, nil })
	})
}
