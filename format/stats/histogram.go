package stats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// EstimatedHistogram is utils/EstimatedHistogram.java as stored: bucket i
// counts values in (Offsets[i-1], Offsets[i]] (bucket 0 everything up to
// Offsets[0]) and the last bucket, one past the offsets, counts values
// above the largest offset (the overflow bucket).
//
// The offsets are stored in the file, so they are kept as read; writers
// compute them with NewOffsets (155 buckets for partition sizes, 118 for
// cells per partition).
type EstimatedHistogram struct {
	Offsets []int64
	Buckets []int64
}

// Bucket counts (offsets) MetadataCollector uses in Cassandra 5.0 (the nc and
// oa fixtures); 3.11 and 4.x wrote 150 for partition sizes.
const (
	PartitionSizeBuckets     = 155
	CellsPerPartitionBuckets = 118
)

// NewOffsets computes the bucket offsets EstimatedHistogram.newOffsets
// does: 1, then each the previous times 1.2 rounded half up, at least one
// more than the previous; with considerZeroes a 0 comes first.
func NewOffsets(size int, considerZeroes bool) []int64 {
	if size <= 0 {
		return nil
	}
	n := size
	if considerZeroes {
		n++
	}
	out := make([]int64, 0, n)
	if considerZeroes {
		out = append(out, 0)
	}
	last := int64(1)
	out = append(out, last)
	for len(out) < n {
		// Java's Math.round(double) is floor(x + 0.5).
		next := int64(math.Floor(float64(last)*1.2 + 0.5))
		if next == last {
			next++
		}
		out = append(out, next)
		last = next
	}
	return out
}

// NewEstimatedHistogram returns an empty histogram with the given number of
// computed offsets (and one more bucket for overflow).
func NewEstimatedHistogram(bucketCount int) EstimatedHistogram {
	offs := NewOffsets(bucketCount, false)
	return EstimatedHistogram{Offsets: offs, Buckets: make([]int64, len(offs)+1)}
}

// ErrOverflowed is returned by Percentile and Mean when values above the
// largest offset were recorded, as EstimatedHistogram refuses then too.
var ErrOverflowed = errors.New("stats: histogram overflowed (values above the largest bucket offset); use WithoutOverflow as Cassandra does on load")

// Count is the number of recorded values, overflow included.
func (h EstimatedHistogram) Count() int64 {
	var n int64
	for _, b := range h.Buckets {
		n += b
	}
	return n
}

// Overflow is the count in the overflow bucket.
func (h EstimatedHistogram) Overflow() int64 {
	if len(h.Buckets) == 0 {
		return 0
	}
	return h.Buckets[len(h.Buckets)-1]
}

// IsOverflowed reports whether any value exceeded the largest offset.
func (h EstimatedHistogram) IsOverflowed() bool { return h.Overflow() > 0 }

// WithoutOverflow returns a copy whose overflow bucket is zero: what
// StatsMetadata's deserializer does (with a warning) before anyone computes
// percentiles, so tools such as sstablemetadata show degraded but defined
// figures.
func (h EstimatedHistogram) WithoutOverflow() EstimatedHistogram {
	c := EstimatedHistogram{Offsets: h.Offsets, Buckets: slices.Clone(h.Buckets)}
	if len(c.Buckets) > 0 {
		c.Buckets[len(c.Buckets)-1] = 0
	}
	return c
}

// Min is the smallest value that could have been recorded.
func (h EstimatedHistogram) Min() int64 {
	for i, b := range h.Buckets {
		if b > 0 {
			if i == 0 || i-1 >= len(h.Offsets) {
				return 0
			}
			return 1 + h.Offsets[i-1]
		}
	}
	return 0
}

// Max is the largest value that could have been recorded, math.MaxInt64
// when the histogram overflowed.
func (h EstimatedHistogram) Max() int64 {
	if h.IsOverflowed() {
		return math.MaxInt64
	}
	for i := len(h.Buckets) - 2; i >= 0; i-- {
		if h.Buckets[i] > 0 && i < len(h.Offsets) {
			return h.Offsets[i]
		}
	}
	return 0
}

// Percentile estimates the value at p (0..1): the offset of the first
// bucket where the running count reaches ceil(count*p).
func (h EstimatedHistogram) Percentile(p float64) (int64, error) {
	if p < 0 || p > 1 || math.IsNaN(p) {
		return 0, fmt.Errorf("stats: percentile %v outside 0..1", p)
	}
	if h.IsOverflowed() {
		return 0, ErrOverflowed
	}
	want := int64(math.Ceil(float64(h.Count()) * p))
	if want == 0 {
		return 0, nil
	}
	var seen int64
	for i := 0; i < len(h.Buckets)-1 && i < len(h.Offsets); i++ {
		seen += h.Buckets[i]
		if seen >= want {
			return h.Offsets[i], nil
		}
	}
	return 0, nil
}

// RawMean is the count-weighted mean of the bucket offsets (NaN when empty,
// as in Java).
func (h EstimatedHistogram) RawMean() (float64, error) {
	if h.IsOverflowed() {
		return 0, ErrOverflowed
	}
	var elements, sum int64
	for i := 0; i < len(h.Buckets)-1 && i < len(h.Offsets); i++ {
		elements += h.Buckets[i]
		sum += h.Buckets[i] * h.Offsets[i]
	}
	return float64(sum) / float64(elements), nil
}

// Mean is RawMean rounded up, as EstimatedHistogram.mean.
func (h EstimatedHistogram) Mean() (int64, error) {
	m, err := h.RawMean()
	if err != nil {
		return 0, err
	}
	return int64(math.Ceil(m)), nil
}

// decodeHistogram reads an int count n, then n (offset, count) long pairs;
// the first pair repeats the first offset (the serializer writes offset
// max(i-1, 0) with bucket i).
func (c *cursor) histogram(what string) EstimatedHistogram {
	defer c.enter(what)()
	at := c.pos
	n := c.count(at, int64(c.i32("bucket count")), 16, "bucket")
	if c.err != nil {
		return EstimatedHistogram{}
	}
	if n < 2 {
		// Java sizes the offsets n-1 and then stores into index 0: fewer
		// than two buckets cannot be read back.
		c.fail(at, fmt.Sprintf("with at least 2 buckets, found %d", n), nil)
		return EstimatedHistogram{}
	}
	h := EstimatedHistogram{Offsets: make([]int64, n-1), Buckets: make([]int64, n)}
	var first int64
	for i := 0; i < n; i++ {
		off := c.i64("bucket offset")
		if i == 0 {
			first = off
		} else {
			h.Offsets[i-1] = off
		}
		h.Buckets[i] = c.i64("bucket count")
	}
	if c.err == nil && first != h.Offsets[0] {
		c.fail(at+4, fmt.Sprintf("first bucket offset %d repeated by the second bucket, found %d", first, h.Offsets[0]), nil)
	}
	return h
}

func (h EstimatedHistogram) appendTo(dst []byte, what string) ([]byte, error) {
	if len(h.Buckets) < 2 || len(h.Offsets) != len(h.Buckets)-1 {
		return dst, fmt.Errorf("stats: %s has %d offsets and %d buckets; want at least 2 buckets and one offset fewer", what, len(h.Offsets), len(h.Buckets))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(h.Buckets)))
	for i, b := range h.Buckets {
		off := h.Offsets[max(i-1, 0)]
		dst = binary.BigEndian.AppendUint64(dst, uint64(off))
		dst = binary.BigEndian.AppendUint64(dst, uint64(b))
	}
	return dst, nil
}

// TombstoneHistogram is utils/streamhist/TombstoneHistogram.java: the
// estimated number of tombstones that become droppable at each local
// deletion time (seconds). Legacy versions store each bin as a double time
// and a long count; oa as a long time and an int count.
type TombstoneHistogram struct {
	// MaxBinSize is what the file stores ahead of the bins; Cassandra
	// writes the bin count there and ignores it on read. Kept for exactness.
	MaxBinSize int32
	Bins       []TombstoneBin
}

// TombstoneBin is one (local deletion time, tombstone count) point.
type TombstoneBin struct {
	DeletionTime int64
	Count        int64
}

// Bytes per bin.
const (
	legacyTombstoneBinSize = 16 // double + long
	oaTombstoneBinSize     = 12 // long + int
	// oaTombstonePadding is what the oa serializer's size estimate (16 per
	// bin, copied from the legacy one) exceeds what it writes by.
	oaTombstonePadding = legacyTombstoneBinSize - oaTombstoneBinSize
)

// Sum estimates the tombstones with a deletion time at or before t, with
// the trapezoid interpolation of StreamingTombstoneHistogramBuilder's
// DataHolder.sum. Bins are taken in stored order, which Cassandra keeps
// sorted.
func (h TombstoneHistogram) Sum(t int64) float64 {
	var sum float64
	for i, b := range h.Bins {
		if b.DeletionTime > t {
			if i == 0 {
				return 0
			}
			prev := h.Bins[i-1]
			weight := float64(t-prev.DeletionTime) / float64(b.DeletionTime-prev.DeletionTime)
			mb := float64(prev.Count) + float64(b.Count-prev.Count)*weight
			sum -= float64(prev.Count)
			sum += (float64(prev.Count) + mb) * weight / 2
			sum += float64(prev.Count) / 2
			return sum
		}
		sum += float64(b.Count)
	}
	return sum
}

func (c *cursor) tombstoneHistogram(uintDeletionTime bool) TombstoneHistogram {
	defer c.enter("tombstone histogram")()
	var h TombstoneHistogram
	h.MaxBinSize = c.i32("max bin size")
	at := c.pos
	size := oaTombstoneBinSize
	if !uintDeletionTime {
		size = legacyTombstoneBinSize
	}
	n := c.count(at, int64(c.i32("bin count")), size, "bin")
	if c.err != nil || n == 0 {
		return h
	}
	// A bin takes 16 bytes in memory and 12 in oa: grow with the bins read.
	h.Bins = make([]TombstoneBin, 0, initialCap(n))
	for i := 0; i < n && c.err == nil; i++ {
		if uintDeletionTime {
			t := c.i64("point")
			h.Bins = append(h.Bins, TombstoneBin{DeletionTime: t, Count: int64(c.i32("count"))})
			continue
		}
		pat := c.pos
		p := c.f64("point")
		if c.err == nil && (p != math.Trunc(p) || p < math.MinInt64 || p >= math.MaxInt64 || (p == 0 && math.Signbit(p))) {
			// Cassandra writes (double) of an integer deletion time.
			c.fail(pat, fmt.Sprintf("point as a whole number of seconds, found %v", p), nil)
		}
		h.Bins = append(h.Bins, TombstoneBin{DeletionTime: int64(p), Count: c.i64("count")})
	}
	return h
}

func (h TombstoneHistogram) appendTo(dst []byte, uintDeletionTime bool) ([]byte, error) {
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.MaxBinSize))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(h.Bins)))
	for _, b := range h.Bins {
		if uintDeletionTime {
			if b.Count < math.MinInt32 || b.Count > math.MaxInt32 {
				return dst, fmt.Errorf("stats: tombstone bin count %d does not fit the int oa stores", b.Count)
			}
			dst = binary.BigEndian.AppendUint64(dst, uint64(b.DeletionTime))
			dst = binary.BigEndian.AppendUint32(dst, uint32(int32(b.Count)))
			continue
		}
		dst = appendF64(dst, float64(b.DeletionTime))
		dst = binary.BigEndian.AppendUint64(dst, uint64(b.Count))
	}
	return dst, nil
}
