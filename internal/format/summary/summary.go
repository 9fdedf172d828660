// Package summary reads, writes and builds Summary.db, the sampled index of
// a big-format sstable's Index.db (io/sstable/indexsummary/IndexSummary.java,
// IndexSummaryBuilder.java, io/sstable/Downsampling.java,
// io/sstable/format/big/IndexSummaryComponent.java).
//
// Layout, big-endian unless noted:
//
//	int   min index interval
//	int   entry count n
//	long  size of the sampled region (4n + entry bytes)
//	int   sampling level (1..128; 128 is full sampling)
//	int   entry count at full sampling
//	n x int, little-endian: offset of entry i from the start of the region
//	n x entry: key bytes, then its Index.db position as a little-endian long
//	int length + first partition key, int length + last partition key
//
// The region is Cassandra's off-heap memory dumped as is, hence the
// little-endian offsets and positions; a key's length is implied by the
// next entry's offset.
package summary

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/reader"
)

const component = "Summary.db"

// BaseSamplingLevel is full sampling (Downsampling.BASE_SAMPLING_LEVEL).
const BaseSamplingLevel = 128

const headerSize = 4 + 4 + 8 + 4 + 4

// Entry is one sampled partition: its key and the offset of its entry in
// Index.db.
type Entry struct {
	Key      []byte
	Position int64
}

// Summary is a decoded or built Summary.db. A decoded summary's keys point
// into the bytes it was decoded from.
type Summary struct {
	MinIndexInterval   int
	SamplingLevel      int
	SizeAtFullSampling int // entries the summary would hold at sampling level 128
	First, Last        []byte

	offsets []int32 // start of entry i in region (relative to region start)
	region  []byte  // entries: key bytes + little-endian position, back to back
}

// Len is the number of sampled entries.
func (s *Summary) Len() int { return len(s.offsets) }

func (s *Summary) end(i int) int {
	if i == len(s.offsets)-1 {
		return len(s.region)
	}
	return int(s.offsets[i+1])
}

// Key is the partition key of entry i.
func (s *Summary) Key(i int) []byte {
	return s.region[s.offsets[i] : s.end(i)-8 : s.end(i)-8]
}

// Position is the Index.db offset of entry i.
func (s *Summary) Position(i int) int64 {
	return int64(binary.LittleEndian.Uint64(s.region[s.end(i)-8:]))
}

// Entry returns entry i.
func (s *Summary) Entry(i int) Entry { return Entry{Key: s.Key(i), Position: s.Position(i)} }

// EstimatedKeyCount is Cassandra's estimate of the partitions in the
// sstable, (SizeAtFullSampling+1) * MinIndexInterval.
func (s *Summary) EstimatedKeyCount() int64 {
	return (int64(s.SizeAtFullSampling) + 1) * int64(s.MinIndexInterval)
}

// FloorIndex returns the last entry whose key is <= key, or -1 when key
// sorts before every entry. cmp must order keys as the sstable does: for
// token.Partitioner p, p.CompareKeys.
func (s *Summary) FloorIndex(key []byte, cmp func(a, b []byte) int) int {
	// first entry whose key is > key, minus one
	return sort.Search(len(s.offsets), func(i int) bool { return cmp(s.Key(i), key) > 0 }) - 1
}

// Floor returns the Index.db position to scan from for key: that of the
// last sampled key <= key. ok is false when key sorts before the first
// sampled key, which is the sstable's first key, so the key is not in it.
// The scan needs to cover at most EffectiveIntervalAfter(i) entries.
func (s *Summary) Floor(key []byte, cmp func(a, b []byte) int) (indexPos int64, ok bool) {
	i := s.FloorIndex(key, cmp)
	if i < 0 {
		return 0, false
	}
	return s.Position(i), true
}

// EffectiveIntervalAfter is the number of Index.db entries from entry i up
// to (not including) the next sampled one, given the sampling level
// (Downsampling.getEffectiveIndexIntervalAfterIndex).
func (s *Summary) EffectiveIntervalAfter(i int) int {
	return effectiveIntervalAfter(i, s.SamplingLevel, s.MinIndexInterval)
}

// ReadFile reads and decodes a Summary.db, naming the file in errors.
func ReadFile(path string) (*Summary, error) {
	b, err := reader.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading index summary: %w", err)
	}
	s, err := Decode(b)
	return s, corrupt.WithFile(err, path)
}

// Decode parses Summary.db bytes. The summary refers to b; do not modify
// it while the summary is in use.
func Decode(b []byte) (*Summary, error) {
	if len(b) < headerSize {
		return nil, corruptAt(0, fmt.Sprintf("a %d-byte header", headerSize), fmt.Errorf("only %d bytes", len(b)))
	}
	minInterval := int32(binary.BigEndian.Uint32(b[0:]))
	count := int32(binary.BigEndian.Uint32(b[4:]))
	size := int64(binary.BigEndian.Uint64(b[8:]))
	level := int32(binary.BigEndian.Uint32(b[16:]))
	full := int32(binary.BigEndian.Uint32(b[20:]))
	switch {
	case minInterval < 1:
		return nil, corruptAt(0, "a min index interval >= 1", fmt.Errorf("found %d", minInterval))
	case count < 1:
		return nil, corruptAt(4, "an entry count >= 1", fmt.Errorf("found %d", count))
	case int64(count)*12 > int64(len(b)-headerSize):
		return nil, corruptAt(4, fmt.Sprintf("an entry count whose 12+ bytes per entry fit in the %d bytes left", len(b)-headerSize), fmt.Errorf("found %d", count))
	case size < int64(count)*12 || size > int64(len(b)-headerSize-8):
		return nil, corruptAt(8, fmt.Sprintf("a sampled region size in %d..%d (12+ bytes per entry, then two key lengths)", int64(count)*12, len(b)-headerSize-8), fmt.Errorf("found %d", size))
	case level < 1 || level > BaseSamplingLevel:
		return nil, corruptAt(16, fmt.Sprintf("a sampling level in 1..%d", BaseSamplingLevel), fmt.Errorf("found %d", level))
	case full < 0:
		return nil, corruptAt(20, "a full-sampling entry count >= 0", fmt.Errorf("found %d", full))
	}
	base := int64(count) * 4
	regionStart := int64(headerSize) + base
	region := b[regionStart : headerSize+size]
	offsets := make([]int32, count)
	for i := range offsets {
		at := int64(headerSize) + int64(i)*4
		off := int64(int32(binary.LittleEndian.Uint32(b[at:]))) - base
		lo, hi := int64(0), int64(len(region))-8
		if i > 0 {
			lo = int64(offsets[i-1]) + 8
		}
		if i == 0 && off != 0 {
			return nil, corruptAt(at, fmt.Sprintf("the first entry offset to be %d (just past the %d offsets)", base, count), fmt.Errorf("found %d", off+base))
		}
		if off < lo || off > hi {
			return nil, corruptAt(at, fmt.Sprintf("entry %d's little-endian offset in %d..%d (after the previous key and position, room for its own)", i, lo+base, hi+base), fmt.Errorf("found %d", off+base))
		}
		offsets[i] = int32(off)
	}
	p := int64(headerSize) + size
	first, p, err := lengthPrefixed(b, p, "first key")
	if err != nil {
		return nil, err
	}
	last, p, err := lengthPrefixed(b, p, "last key")
	if err != nil {
		return nil, err
	}
	if p != int64(len(b)) {
		return nil, corruptAt(p, "the end of the file after the last key", fmt.Errorf("%d more bytes", int64(len(b))-p))
	}
	return &Summary{
		MinIndexInterval:   int(minInterval),
		SamplingLevel:      int(level),
		SizeAtFullSampling: int(full),
		First:              first,
		Last:               last,
		offsets:            offsets,
		region:             region,
	}, nil
}

func lengthPrefixed(b []byte, p int64, what string) ([]byte, int64, error) {
	if int64(len(b))-p < 4 {
		return nil, p, corruptAt(p, "the int length of the "+what, fmt.Errorf("only %d bytes left", int64(len(b))-p))
	}
	n := int64(int32(binary.BigEndian.Uint32(b[p:])))
	if n < 0 || n > int64(len(b))-p-4 {
		return nil, p, corruptAt(p, fmt.Sprintf("a %s length in 0..%d", what, int64(len(b))-p-4), fmt.Errorf("found %d", n))
	}
	return b[p+4 : p+4+n : p+4+n], p + 4 + n, nil
}

// SerializedSize is the length Encode returns.
func (s *Summary) SerializedSize() int {
	return headerSize + 4*len(s.offsets) + len(s.region) + 4 + len(s.First) + 4 + len(s.Last)
}

// Encode serializes the summary as Cassandra writes Summary.db.
func (s *Summary) Encode() []byte {
	return s.AppendEncoded(make([]byte, 0, s.SerializedSize()))
}

// AppendEncoded appends the serialized summary to dst.
func (s *Summary) AppendEncoded(dst []byte) []byte {
	n := len(s.offsets)
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.MinIndexInterval))
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = binary.BigEndian.AppendUint64(dst, uint64(4*n+len(s.region)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.SamplingLevel))
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.SizeAtFullSampling))
	for _, off := range s.offsets {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(off)+uint32(4*n))
	}
	dst = append(dst, s.region...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s.First)))
	dst = append(dst, s.First...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s.Last)))
	return append(dst, s.Last...)
}

func corruptAt(off int64, expected string, err error) error {
	return &corrupt.Error{Component: component, Offset: off, Expected: expected, Err: err}
}

// maxRegion is the most sampled bytes a summary holds (2GiB, Integer.MAX_VALUE).
const maxRegion = math.MaxInt32
