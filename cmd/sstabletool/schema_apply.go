package main

import (
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/inspect"
)

// applySchema names key columns from a CREATE TABLE file and checks its
// types against the sstable's serialization header.
func applySchema(s *sstable.SSTable, file string) error {
	_, err := inspect.LoadSchema(s, file)
	return err
}
