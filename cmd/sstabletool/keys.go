package main

import (
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/inspect"
)

func keyString(s *sstable.SSTable, key []byte) string { return inspect.FormatKey(s.KeyType(), key) }

// parseKey reads a partition key given on the command line (-k, -x) the way
// AbstractType.fromString does. A key of several columns must name every
// one of them (a:b:c, a ':' inside a value escaped as \:): a prefix would
// match no partition and the command would print nothing, as if the key
// were absent.
func parseKey(s *sstable.SSTable, flag, k string) ([]byte, error) {
	b, err := s.KeyType().FromString(k)
	if err != nil {
		return nil, usageError("%s %q: %v", flag, k, err)
	}
	if t := s.KeyType(); t.Kind == cqltype.Composite {
		comps, _, err := t.Components(b)
		if err != nil {
			return nil, usageError("%s %q: %v", flag, k, err)
		}
		if len(comps) != len(t.Params) {
			return nil, usageError("%s %q: the partition key has %d columns (%s), the value gives %d; write them all, separated by ':' (a ':' inside a value as \\:)",
				flag, k, len(t.Params), keyColumnTypes(t), len(comps))
		}
	}
	return b, nil
}

func keyColumnTypes(t *cqltype.Type) string {
	s := ""
	for i, p := range t.Params {
		if i > 0 {
			s += ", "
		}
		s += p.CQL()
	}
	return s
}

// parseKeys reads every value of a repeatable key flag.
func parseKeys(s *sstable.SSTable, flag string, ks []string) ([][]byte, error) {
	out := make([][]byte, 0, len(ks))
	for _, k := range ks {
		b, err := parseKey(s, flag, k)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
