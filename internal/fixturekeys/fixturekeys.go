// Package fixturekeys is test support (tests only; it imports testing) for
// format/token, format/filter and format/summary: it reads just enough of a real sstable's Index.db (each
// entry's key and start offset) and Statistics.db (partitioner and bloom
// filter fp chance) to check those components against the keys Cassandra
// wrote. It is deliberately not an Index.db or Statistics.db decoder; those
// live in format/index and format/stats, which import format/token, so
// tests of format/token could not use them. Being this small and
// independent also makes it a second opinion the decoders are checked
// against.
package fixturekeys

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// Table is one fixture sstable.
type Table struct {
	Name        string // e.g. "nc/legacy_nc_clust"
	Prefix      string // path without the component, e.g. ".../nc-1-big-"
	Version     string // "me", "nb", ...
	Partitioner string // Java class from the validation metadata
	FPChance    float64
	Keys        [][]byte // partition keys in Index.db order
	IndexPos    []int64  // offset of each key's Index.db entry
}

// Component reads one component of the table.
func (tb *Table) Component(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(tb.Prefix + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// All returns every fixture table that has an Index.db, or skips.
func All(t testing.TB) []*Table {
	t.Helper()
	var out []*Table
	for _, data := range fixtures.DataFiles(t) {
		prefix := strings.TrimSuffix(data, "Data.db")
		if _, err := os.Stat(prefix + "Index.db"); err != nil {
			continue
		}
		dir := filepath.Dir(prefix)
		tb := &Table{
			Name:    filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir),
			Prefix:  prefix,
			Version: filepath.Base(prefix)[:2],
		}
		tb.readStats(t)
		tb.readIndex(t)
		out = append(out, tb)
	}
	if len(out) == 0 {
		t.Skip("no fixture sstables with Index.db")
	}
	return out
}

// readStats finds the validation component (type 0) through the table of
// contents at the start of Statistics.db: int count, [int crc from na on],
// then count pairs of (int type, int offset). Validation metadata is a
// writeUTF partitioner name followed by the fp chance as a double.
func (tb *Table) readStats(t testing.TB) {
	t.Helper()
	b := tb.Component(t, "Statistics.db")
	count := int(binary.BigEndian.Uint32(b))
	toc := 4
	if tb.Version >= "na" {
		toc += 4
	}
	for i := 0; i < count; i++ {
		typ := binary.BigEndian.Uint32(b[toc+8*i:])
		off := int(binary.BigEndian.Uint32(b[toc+8*i+4:]))
		if typ != 0 {
			continue
		}
		n := int(binary.BigEndian.Uint16(b[off:]))
		tb.Partitioner = string(b[off+2 : off+2+n])
		tb.FPChance = math.Float64frombits(binary.BigEndian.Uint64(b[off+2+n:]))
		return
	}
	t.Fatalf("%s: no validation metadata in Statistics.db", tb.Name)
}

// readIndex walks Index.db entries: unsigned short key length, key,
// unsigned vint Data.db position, unsigned vint promoted-index size and
// that many bytes.
func (tb *Table) readIndex(t testing.TB) {
	t.Helper()
	b := tb.Component(t, "Index.db")
	for p := 0; p < len(b); {
		start := p
		n := int(binary.BigEndian.Uint16(b[p:]))
		p += 2
		tb.Keys = append(tb.Keys, b[p:p+n])
		tb.IndexPos = append(tb.IndexPos, int64(start))
		p += n
		_, w, err := vint.Unsigned(b[p:])
		if err != nil {
			t.Fatalf("%s: Index.db at %d: %v", tb.Name, p, err)
		}
		p += w
		size, w, err := vint.Unsigned(b[p:])
		if err != nil {
			t.Fatalf("%s: Index.db at %d: %v", tb.Name, p, err)
		}
		p += w + int(size)
	}
}
