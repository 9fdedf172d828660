package stats

import "sort"

// Add records one value the way EstimatedHistogram.add does: in the first
// bucket whose offset is at least v, or in the overflow bucket past the
// largest offset. Writers use it to build PartitionSizes and
// CellsPerPartition; converters use it with Remove to move a partition whose
// size changed.
func (h EstimatedHistogram) Add(v int64) { h.Buckets[h.bucket(v)]++ }

// Remove undoes one Add of v; it reports false (and changes nothing) when
// that bucket is already empty.
func (h EstimatedHistogram) Remove(v int64) bool {
	i := h.bucket(v)
	if h.Buckets[i] == 0 {
		return false
	}
	h.Buckets[i]--
	return true
}

func (h EstimatedHistogram) bucket(v int64) int {
	return sort.Search(len(h.Offsets), func(i int) bool { return h.Offsets[i] >= v })
}
