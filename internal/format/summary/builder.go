package summary

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// expectedKeySize is Cassandra's default guess at a key's size
// (cassandra.index_summary_expected_key_size) when sizing a summary.
const expectedKeySize = 64

// Builder samples (key, Index.db position) pairs in sstable order into a
// Summary, as IndexSummaryBuilder does while Cassandra writes Index.db.
type Builder struct {
	minIndexInterval int
	samplingLevel    int
	startPoints      []int

	keysWritten          int64
	indexIntervalMatches int64
	nextSamplePosition   int64

	offsets []int32
	region  []byte
	first   []byte
	last    []byte
}

// NewBuilder starts a summary. expectedKeys is the writer's estimate of the
// partition count; it only matters when a summary of that many keys would
// pass 2GiB, in which case Cassandra widens the interval (and so do we).
// Cassandra writes new sstables at samplingLevel 128 with the table's
// min_index_interval (default 128).
func NewBuilder(expectedKeys int64, minIndexInterval, samplingLevel int) (*Builder, error) {
	if minIndexInterval < 1 || minIndexInterval > math.MaxInt32 {
		return nil, fmt.Errorf("index summary: min index interval %d: expected 1..%d", minIndexInterval, math.MaxInt32)
	}
	if samplingLevel < 1 || samplingLevel > BaseSamplingLevel {
		return nil, fmt.Errorf("index summary: sampling level %d: expected 1..%d", samplingLevel, BaseSamplingLevel)
	}
	entrySize := int64(expectedKeySize + 8)
	if expectedKeys/int64(minIndexInterval)*entrySize > math.MaxInt32 {
		minIndexInterval = int(math.Ceil(float64(expectedKeys*entrySize) / math.MaxInt32))
	}
	return &Builder{
		minIndexInterval: minIndexInterval,
		samplingLevel:    samplingLevel,
		startPoints:      startPoints(BaseSamplingLevel, samplingLevel),
		// the first key is always sampled; the next candidate is test 1
		indexIntervalMatches: 1,
	}, nil
}

// Add records the next partition: its key and the offset of its entry in
// Index.db. Keys must come in sstable order. key is copied if sampled.
func (b *Builder) Add(key []byte, indexPos int64) {
	if b.keysWritten == 0 {
		b.first = append(b.first[:0], key...)
	}
	b.last = append(b.last[:0], key...)
	if b.keysWritten == b.nextSamplePosition {
		if int64(len(b.region))+int64(len(key))+8 <= maxRegion {
			b.offsets = append(b.offsets, int32(len(b.region)))
			b.region = append(b.region, key...)
			b.region = binary.LittleEndian.AppendUint64(b.region, uint64(indexPos))
			b.setNextSamplePosition(b.keysWritten)
		}
		// else: Cassandra stops sampling once the summary is full and
		// logs an error; the summary then covers only the start.
	}
	b.keysWritten++
}

// setNextSamplePosition moves to the next multiple of the interval that the
// sampling level keeps: candidate k (counting from 1) is dropped when
// k mod 128 is one of the level's start points.
func (b *Builder) setNextSamplePosition(position int64) {
next:
	for {
		position += int64(b.minIndexInterval)
		test := b.indexIntervalMatches
		b.indexIntervalMatches++
		for _, start := range b.startPoints {
			if (test-int64(start))%BaseSamplingLevel == 0 {
				continue next
			}
		}
		b.nextSamplePosition = position
		return
	}
}

// Keys is the number of keys added.
func (b *Builder) Keys() int64 { return b.keysWritten }

// Build returns the summary of every key added so far; the builder must
// not be used afterwards.
func (b *Builder) Build() (*Summary, error) {
	if len(b.offsets) == 0 {
		return nil, errors.New("index summary: no keys added")
	}
	return &Summary{
		MinIndexInterval:   b.minIndexInterval,
		SamplingLevel:      b.samplingLevel,
		SizeAtFullSampling: int(math.Ceil(float64(b.keysWritten) / float64(b.minIndexInterval))),
		First:              b.first,
		Last:               b.last,
		offsets:            b.offsets,
		region:             b.region,
	}, nil
}

// Build samples a whole sstable's partitions at once.
func Build(entries []Entry, minIndexInterval, samplingLevel int) (*Summary, error) {
	b, err := NewBuilder(int64(len(entries)), minIndexInterval, samplingLevel)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b.Add(e.Key, e.Position)
	}
	return b.Build()
}
