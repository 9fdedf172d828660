package summary

import (
	"fmt"
	"slices"
	"sync"
)

// samplingPattern is Downsampling.getSamplingPattern: the order in which
// the positions 0..level-1 of each block of level entries are dropped when
// sampling goes down, spread out by recursion on the odd and even halves.
func samplingPattern(level int) []int {
	if level <= 1 {
		return []int{0}
	}
	ordering := samplingPattern(level / 2)
	out := make([]int, 0, level)
	for _, i := range ordering {
		out = append(out, 2*i+1) // odds[i]
	}
	for _, i := range ordering {
		out = append(out, 2*i) // evens[i]
	}
	return out
}

var basePattern = sync.OnceValue(func() []int { return samplingPattern(BaseSamplingLevel) })

// startPoints is Downsampling.getStartPoints: the first entry each round
// of going from currentLevel to newLevel removes, corrected for entries
// earlier rounds already removed.
func startPoints(currentLevel, newLevel int) []int {
	all := basePattern()
	initial := BaseSamplingLevel - currentLevel
	rounds := currentLevel - newLevel
	if rounds < 0 {
		rounds = -rounds
	}
	out := make([]int, rounds)
	for i := range out {
		start := all[initial+i]
		adjust := 0
		for _, earlier := range all[:initial] {
			if earlier < start {
				adjust++
			}
		}
		out[i] = start - adjust
	}
	return out
}

// originalIndexes lists, for one block of a summary at the given level,
// which full-sampling entry each remaining entry was. The lists come from
// a table built once: index lookups ask for one per key searched, and
// building it costs an allocation and up to 128×127 comparisons. Callers
// must not modify the result.
func originalIndexes(level int) []int { return originalIndexTable()[level] }

var originalIndexTable = sync.OnceValue(func() *[BaseSamplingLevel + 1][]int {
	var t [BaseSamplingLevel + 1][]int
	for level := 1; level <= BaseSamplingLevel; level++ {
		dropped := basePattern()[:BaseSamplingLevel-level]
		out := make([]int, 0, level)
		for j := range BaseSamplingLevel {
			if !slices.Contains(dropped, j) {
				out = append(out, j)
			}
		}
		t[level] = out
	}
	return &t
})

func effectiveIntervalAfter(index, level, minInterval int) int {
	orig := originalIndexes(level)
	index %= level
	next := BaseSamplingLevel
	if index != len(orig)-1 {
		next = orig[index+1]
	}
	return (next - orig[index]) * minInterval
}

// Downsample drops entries to reach a lower sampling level, as Cassandra's
// index summary redistribution does (IndexSummaryBuilder.downsample).
func (s *Summary) Downsample(newLevel int) (*Summary, error) {
	if newLevel < 1 || newLevel >= s.SamplingLevel {
		return nil, fmt.Errorf("index summary: downsampling from level %d to %d: expected a lower level >= 1", s.SamplingLevel, newLevel)
	}
	starts := startPoints(s.SamplingLevel, newLevel)
	out := &Summary{
		MinIndexInterval:   s.MinIndexInterval,
		SamplingLevel:      newLevel,
		SizeAtFullSampling: s.SizeAtFullSampling,
		First:              s.First,
		Last:               s.Last,
	}
next:
	for i := range s.offsets {
		for _, start := range starts {
			if (i-start)%s.SamplingLevel == 0 {
				continue next
			}
		}
		out.offsets = append(out.offsets, int32(len(out.region)))
		out.region = append(out.region, s.region[s.offsets[i]:s.end(i)]...)
	}
	if len(out.offsets) == 0 {
		return nil, fmt.Errorf("index summary: downsampling to level %d leaves no entries", newLevel)
	}
	return out, nil
}
