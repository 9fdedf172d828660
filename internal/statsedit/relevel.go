package statsedit

import (
	"fmt"
	"math"
	"slices"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
)

// Leveled is one sstable as sstableofflinerelevel sees it: its level and
// its first and last partition keys.
type Leveled struct {
	Desc        format.Descriptor
	Level       int32
	First, Last []byte
	// Partitioner orders the keys (Open sets it from Statistics.db).
	Partitioner token.Partitioner
}

// Open reads what relevel needs of the sstable at path (its Data.db):
// the level from Statistics.db, the first and last keys from Statistics.db
// (nc and later), Summary.db (big format before nc) or Partitions.db (BTI),
// as Cassandra's reader takes them.
func Open(path string) (Leveled, error) {
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		return Leveled{}, err
	}
	defer s.Close()
	l := Leveled{Desc: s.Desc(), Partitioner: s.Partitioner()}
	st := s.Stats().Stats
	if st == nil {
		return l, fmt.Errorf("%s: no stats metadata component", s.Path(format.ComponentStatistics))
	}
	l.Level = st.Level
	switch {
	case st.FirstKey != nil && st.LastKey != nil:
		l.First, l.Last = st.FirstKey, st.LastKey
	case s.Partitions() != nil:
		l.First, l.Last = s.Partitions().FirstKey, s.Partitions().LastKey
	default:
		sum, err := s.Summary()
		if err != nil {
			return l, err
		}
		l.First, l.Last = sum.First, sum.Last
	}
	if l.First == nil || l.Last == nil {
		return l, fmt.Errorf("%s: no first and last key found (Statistics.db, Summary.db, Partitions.db)", path)
	}
	return l, nil
}

// Leveling is SSTableOfflineRelevel's answer for the sstables of one
// directory.
type Leveling struct {
	// Current counts the sstables of each level now, L0 first, up to the
	// highest level any of them is on.
	Current []int
	// New counts them per level after releveling, L0 first.
	New []int
	// Levels is each sstable's new level, in the order given.
	Levels []int32
}

// Relevel levels sstables as sstableofflinerelevel does: sorted by last
// key (compare is the partitioner's order of decorated keys), the first
// level takes every sstable that starts after the one before it in the
// level ends, the next level the same of what is left, and so on; the
// first ceil(log10(n)) of these become the top levels, the highest
// first, and whatever is left goes to L0. Cassandra sorts a hash set, so
// sstables with equal last keys come in any order; here they keep the
// order given.
func Relevel(ss []Leveled, compare func(a, b []byte) int) Leveling {
	var lv Leveling
	maxLevel := int32(0)
	for _, s := range ss {
		maxLevel = max(maxLevel, s.Level)
	}
	lv.Current = make([]int, maxLevel+1)
	for _, s := range ss {
		if s.Level >= 0 {
			lv.Current[s.Level]++
		}
	}
	order := make([]int, len(ss))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return compare(ss[a].Last, ss[b].Last) })
	var levels [][]int
	for len(order) > 0 {
		var level, rest []int
		var lastLast []byte
		for _, i := range order {
			if level == nil || compare(lastLast, ss[i].First) < 0 {
				level = append(level, i)
				lastLast = ss[i].Last
			} else {
				rest = append(rest, i)
			}
		}
		levels = append(levels, level)
		order = rest
	}
	expected := 0
	if len(ss) > 0 {
		expected = int(math.Ceil(math.Log10(float64(len(ss)))))
	}
	lv.Levels = make([]int32, len(ss))
	l0 := 0
	if expected < len(levels) {
		for _, l := range levels[expected:] {
			l0 += len(l) // their new level is 0
		}
		levels = levels[:expected]
	}
	lv.New = make([]int, len(levels)+1)
	lv.New[0] = l0
	// levels[0] is the highest level.
	for i, l := range levels {
		n := int32(len(levels) - i)
		lv.New[n] = len(l)
		for _, s := range l {
			lv.Levels[s] = n
		}
	}
	return lv
}
