package sstable_test

import (
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/testtables"
)

// CASSANDRA-15035: 3.x recorded frozen<udt> as UserType(...). The reader
// must see from the cells that the column is frozen, say so, and decode it.
func TestFrozenUDTHeaderRepairedFromCells(t *testing.T) {
	path := testtables.UDTTable(t, true, true)
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fixes := s.HeaderFixes()
	if len(fixes) != 1 || fixes[0].Column != "info" || fixes[0].Stored != testtables.UDTClass || fixes[0].ReadAs != "frozen<ut>" ||
		!strings.Contains(fixes[0].Why, "CASSANDRA-15035") {
		t.Fatalf("header fixes %+v", fixes)
	}
	n := 0
	err = s.EachPartition(func(h *rows.PartitionHeader, d *rows.Decoder) error {
		for {
			u, err := d.Next(false)
			if err != nil || u == nil {
				return err
			}
			for _, c := range u.Cells {
				if s.Schema().Regular[c.Column].Name == "info" && (c.Path != nil || len(c.Value) != 16) {
					t.Errorf("info cell %+v: want one 16-byte frozen UDT value", c)
				}
			}
			n++
		}
	})
	if err != nil || n != 3 {
		t.Fatalf("decoded %d rows: %v", n, err)
	}
}

// The same header with really non-frozen cells is left alone.
func TestNonFrozenUDTHeaderKept(t *testing.T) {
	path := testtables.UDTTable(t, false, true)
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fixes := s.HeaderFixes(); len(fixes) != 0 {
		t.Fatalf("header fixes %+v on a non-frozen UDT", fixes)
	}
	var info int
	for i, c := range s.Schema().Regular {
		if c.Name == "info" {
			info = i
			if !c.Complex {
				t.Fatal("info read as frozen")
			}
		}
	}
	paths := 0
	err = s.EachPartition(func(h *rows.PartitionHeader, d *rows.Decoder) error {
		for {
			u, err := d.Next(false)
			if err != nil || u == nil {
				return err
			}
			for _, c := range u.Cells {
				if c.Column == info && len(c.Path) == 2 {
					paths++
				}
			}
		}
	})
	if err != nil || paths != 6 {
		t.Fatalf("%d cells with paths: %v", paths, err)
	}
}
