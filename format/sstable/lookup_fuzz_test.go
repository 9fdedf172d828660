package sstable_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// lookupTable is a writable copy of a fixture, the bytes of its index
// components, and what a scan of its Data.db finds: the oracle.
type lookupTable struct {
	desc  format.Descriptor
	comps map[string][]byte
	at    map[string]int64
	keys  [][]byte
}

func newLookupTable(f *testing.F, group, name string) *lookupTable {
	dir := fixtures.CopyTable(f, fixtures.Table(f, group, name))
	m, _ := filepath.Glob(filepath.Join(dir, "*-Data.db"))
	d, _, err := format.ParseDescriptor(m[0])
	if err != nil {
		f.Fatal(err)
	}
	lt := &lookupTable{desc: d, comps: map[string][]byte{}, at: map[string]int64{}}
	for _, c := range []string{format.ComponentIndex, format.ComponentSummary, format.ComponentPartitions, format.ComponentRows} {
		if b, err := os.ReadFile(d.Path(c)); err == nil {
			lt.comps[c] = b
		}
	}
	s, err := sstable.Open(m[0], sstable.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	if err := s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
		lt.at[string(p.Key)] = p.Offset
		lt.keys = append(lt.keys, append([]byte(nil), p.Key...))
		return nil
	}); err != nil {
		f.Fatal(err)
	}
	return lt
}

// FuzzFindAnswersAsAScan writes arbitrary bytes over part of an index
// component (Index.db, Summary.db, Partitions.db, Rows.db) of a real
// sstable, Data.db untouched, and looks up a key of the table or one
// next to it: with OnIndexDamage the answer must be a scan's; without, the
// scan's answer or an error, never another partition or a false absence.
func FuzzFindAnswersAsAScan(f *testing.F) {
	tables := []*lookupTable{
		newLookupTable(f, "nc", "legacy_nc_simple"),
		newLookupTable(f, "me-collections", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91"),
		newLookupTable(f, "da", "legacy_da_clust"),
	}
	// The campaign's cases: me's Index.db with key 0's entry zeroed (dump -k
	// 0 printed partition 1), nc's Summary.db sample sent past Index.db
	// (absent), da's Partitions.db node zeroed (absent).
	f.Add(uint8(1), uint8(0), uint16(2), []byte{0, 0, 0, 0, 0, 0, 0, 0}, uint8(1), false)
	f.Add(uint8(0), uint8(1), uint16(30), []byte{0x20}, uint8(0), true)
	f.Add(uint8(2), uint8(0), uint16(14), []byte{0, 0, 0, 0, 0, 0, 0, 0}, uint8(0), false)
	f.Add(uint8(2), uint8(1), uint16(40), []byte{0xff}, uint8(3), true)
	f.Fuzz(func(t *testing.T, table, comp uint8, at uint16, patch []byte, key uint8, fallback bool) {
		lt := tables[int(table)%len(tables)]
		var names []string
		for _, c := range []string{format.ComponentIndex, format.ComponentSummary, format.ComponentPartitions, format.ComponentRows} {
			if _, ok := lt.comps[c]; ok {
				names = append(names, c)
			}
		}
		c := names[int(comp)%len(names)]
		b := append([]byte(nil), lt.comps[c]...)
		if len(b) > 0 {
			copy(b[int(at)%len(b):], patch)
		}
		if err := os.WriteFile(lt.desc.Path(c), b, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(lt.desc.Path(c), lt.comps[c], 0o644)
		k := append([]byte(nil), lt.keys[int(key)%len(lt.keys)]...)
		if key&0x80 != 0 {
			k[len(k)-1]++ // next to a real key, usually not one
		}
		o := sstable.Options{}
		if fallback {
			o.OnIndexDamage = func(error) {}
		}
		s, err := sstable.Open(lt.desc.Path(format.ComponentData), o)
		if err != nil {
			return
		}
		defer s.Close()
		e, ok, err := s.Find(k)
		want, present := lt.at[string(k)]
		switch {
		case err != nil && fallback:
			t.Fatalf("Find(%x) with a scan to fall back on: %v", k, err)
		case err != nil:
		case ok != present || ok && (e.Position != want || !bytes.Equal(e.Key, k)):
			t.Fatalf("Find(%x) = %v %+v; Data.db: %v at %d", k, ok, e, present, want)
		}
	})
}
