package stats

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

// bucket is the first index whose offset is at least v (len(Offsets) for
// none): sort.Search's probes exactly, so offsets read from a damaged file
// (out of order) land where they always did, written out because the
// closure's call per probe cost more than the probe (Add runs for every
// partition of every scan).
func (h EstimatedHistogram) bucket(v int64) int {
	offs := h.Offsets
	i, j := 0, len(offs)
	for i < j {
		m := int(uint(i+j) >> 1)
		if offs[m] < v {
			i = m + 1
		} else {
			j = m
		}
	}
	return i
}
