package sasi_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/sasi"
	"github.com/sstabletool/sstabletool/internal/testindexes"
)

// fixture builds the SASI index of Cassandra's utf8_with_special_chars
// sstable (Murmur3, me) on val, and a KeyToken over its Index.db.
func fixture(t *testing.T) ([]byte, sasi.Sstable) {
	t.Helper()
	dir := fixtures.CopyTable(t, fixtures.Table(t, "me-collections", "utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91"))
	data := filepath.Join(dir, "me-1-big-Data.db")
	name, err := testindexes.SASI(data, "val_idx", "val")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "me-1-big-"+name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(data, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return b, sasi.Sstable{
		KeyToken: func(pos int64) (int64, error) {
			sc := index.NewScanner(s.Index(), s.IndexCodec(), pos, false)
			if !sc.Next() {
				if err := sc.Err(); err != nil {
					return 0, err
				}
				return 0, sasi.ErrNoKey
			}
			return token.Murmur3.Token(sc.Entry().Key).Int64(), nil
		},
		Token:   func(k []byte) int64 { return token.Murmur3.Token(k).Int64() },
		Compare: bytes.Compare,
	}
}

func TestCheckReadsTheIndex(t *testing.T) {
	b, kt := fixture(t)
	ix, err := sasi.Check(b, kt)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Version != "ab" || ix.Mode != "PREFIX" || ix.TermSize != -1 || ix.DataBlocks != 1 || ix.SuperBlocks != 1 || ix.Terms == 0 || ix.Tokens == 0 {
		t.Errorf("index %+v", ix)
	}
	if ix, err := sasi.Check(nil, kt); err != nil || ix.Terms != 0 {
		t.Errorf("empty file: %+v %v", ix, err)
	}
}

// A flipped byte that Cassandra's reader interprets (the header, the
// level index, a block's terms and offsets, the token trees: magic,
// counts, tokens, key positions), or one of the zeros the writer pads
// with, is caught. SASI stores no checksum: what can change unseen is a
// letter inside a term's value that keeps the terms in order (the first
// and last terms are the header's min and max term, so theirs are
// caught too).
func TestCheckCatchesFlippedBytes(t *testing.T) {
	b, sst := fixture(t)
	// The value bytes of the data block's terms but the first and last
	// (the fixture has one data block, at 4096: an int count, a short
	// offset per term, each term a short length and its bytes).
	middle := map[int]bool{}
	n := int(binary.BigEndian.Uint32(b[4096:]))
	base := 4096 + 4 + 2*n
	for i := 1; i < n-1; i++ {
		at := base + int(binary.BigEndian.Uint16(b[4096+4+2*i:]))
		l := int(binary.BigEndian.Uint16(b[at:]))
		for k := at + 2; k < at+2+l; k++ {
			middle[k] = true
		}
	}
	if len(middle) == 0 {
		t.Fatal("the fixture has no middle term")
	}
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x10
		_, err := sasi.Check(c, sst)
		if err == nil {
			if !middle[i] {
				t.Errorf("byte %d (of %d) flipped: not caught", i, len(b))
			}
			continue
		}
		if _, ok := corrupt.As(err); !ok {
			t.Fatalf("byte %d: not a corrupt.Error: %v", i, err)
		}
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 8200))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := sasi.Check(b, sasi.Sstable{KeyToken: func(int64) (int64, error) { return 0, sasi.ErrNoKey },
			Token: func([]byte) int64 { return 0 }, Compare: bytes.Compare})
		if err != nil {
			if _, ok := corrupt.As(err); !ok {
				t.Fatalf("not a corrupt.Error: %v", err)
			}
		}
	})
}
