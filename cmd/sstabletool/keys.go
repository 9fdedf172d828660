package main

import (
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/inspect"
)

func keyString(s *sstable.SSTable, key []byte) string { return inspect.FormatKey(s.KeyType, key) }
