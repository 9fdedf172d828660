package merge

import (
	"bytes"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// kindOrder is ClusteringPrefix.Kind's comparison and
// comparedToClustering: bounds that sort before the clustering they name
// (exclusive ends, inclusive starts) compare equal to one another, as do
// those after it, so that an end and a start at one place from two
// sstables merge into one boundary.
var kindOrder = [...]struct{ comparison, toClustering int8 }{
	clustering.ExclEndBound:             {0, -1},
	clustering.InclStartBound:           {0, -1},
	clustering.ExclEndInclStartBoundary: {0, -1},
	clustering.StaticClustering:         {1, -1},
	clustering.Clustering:               {2, 0},
	clustering.InclEndExclStartBoundary: {3, 1},
	clustering.InclEndBound:             {3, 1},
	clustering.ExclStartBound:           {3, 1},
}

func order(k clustering.Kind) (int8, int8) {
	if int(k) < len(kindOrder) {
		o := kindOrder[k]
		return o.comparison, o.toClustering
	}
	return 2, 0
}

// comparator is ClusteringComparator over rows and range tombstone
// markers.
type comparator struct{ types []*cqltype.Type }

// component compares one component: null first, then the type's order.
func (c comparator) component(i int, a, b []byte) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	if i < len(c.types) {
		return c.types[i].Compare(a, b)
	}
	return bytes.Compare(a, b)
}

// compare orders two prefixes: by their common components, then, for
// prefixes of one size, by kind, else the shorter by where its kind puts
// it relative to the clusterings it is a prefix of.
func (c comparator) compare(av [][]byte, ak clustering.Kind, bv [][]byte, bk clustering.Kind) int {
	n := min(len(av), len(bv))
	for i := 0; i < n; i++ {
		if r := c.component(i, av[i], bv[i]); r != 0 {
			return r
		}
	}
	ac, at := order(ak)
	bc, bt := order(bk)
	switch {
	case len(av) == len(bv):
		return sign(int(ac) - int(bc))
	case len(av) < len(bv):
		return int(at)
	}
	return -int(bt)
}

// position is an unfiltered's place in clustering order.
func position(u *rows.Unfiltered) ([][]byte, clustering.Kind) {
	if u.Kind == rows.KindMarker {
		return u.Bound.Values, u.Bound.Kind
	}
	return u.Clustering, clustering.Clustering
}

func (c comparator) unfiltereds(a, b *rows.Unfiltered) int {
	av, ak := position(a)
	bv, bk := position(b)
	return c.compare(av, ak, bv, bk)
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}
