package rows

import (
	"bytes"
	"sort"
)

// SortColumns puts columns in the order Cassandra's Columns keeps them and
// Data.db serializes them (schema/ColumnMetadata.compareTo): simple columns
// before complex ones, then by a 6-byte name prefix compared as a signed
// long (which, after the prefix's top-bit flip is shifted away, orders names
// starting with a byte >= 0x80 first), then by the whole name.
func SortColumns(cols []Column) {
	sort.SliceStable(cols, func(i, j int) bool {
		a, b := &cols[i], &cols[j]
		oa, ob := comparisonOrder(a), comparisonOrder(b)
		if oa != ob {
			return oa < ob
		}
		return bytes.Compare([]byte(a.Name), []byte(b.Name)) < 0
	})
}

func comparisonOrder(c *Column) int64 {
	var prefix uint64
	name := []byte(c.Name)
	i := 0
	for ; i < len(name) && i < 8; i++ {
		prefix = prefix<<8 | uint64(name[i])
	}
	prefix <<= uint(8-i) * 8
	prefix ^= 1 << 63
	order := int64(prefix >> 16)
	if c.Complex {
		order |= 1 << 60
	}
	// Regular and static columns are compared within their own kind, and
	// their position is always 0, so kind and position bits are left out.
	return order
}
