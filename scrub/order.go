package scrub

import (
	"math"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/merge"
)

// expiredLivenessTTL is LivenessInfo.EXPIRED_LIVENESS_TTL: the TTL of a
// liveness that is expired on purpose (materialized views), not a TTL.
const expiredLivenessTTL = math.MaxInt32

// clusteringOrder is the order of unfiltereds within a partition
// (merge.Order, ClusteringComparator) with the types that render them.
type clusteringOrder struct {
	merge.Order
	types []*cqltype.Type
}

func newClusteringOrder(types []*cqltype.Type) clusteringOrder {
	return clusteringOrder{Order: merge.NewOrder(types), types: types}
}

// sameRow reports whether a and b are two versions of one row.
func (o clusteringOrder) sameRow(a, b *rows.Unfiltered) bool {
	return a.Kind == rows.KindRow && b.Kind == rows.KindRow && o.Compare(a, b) == 0
}

// prefixOf is an unfiltered's clustering prefix.
func prefixOf(u *rows.Unfiltered) (clustering.Kind, [][]byte) {
	switch u.Kind {
	case rows.KindMarker:
		return u.Bound.Kind, u.Bound.Values
	case rows.KindStaticRow:
		return clustering.StaticClustering, nil
	}
	return clustering.Clustering, u.Clustering
}
