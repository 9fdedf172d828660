// Package expired answers the question every TimeWindowCompactionStrategy
// user asks: why are my expired sstables not dropped? An sstable whose
// every cell and tombstone expired more than gc_grace_seconds ago (its
// maximum local deletion time is before gcBefore = now - gc_grace) is
// "fully expired", and compaction deletes it whole, without reading it,
// unless some sstable that still holds live data (or tombstones not yet
// purgeable) has data at least as old as the expired sstable's newest:
// dropping it could then resurrect what its tombstones shadow. That live
// sstable blocks it.
//
// The rule is CompactionController.getFullyExpiredSSTables, as
// TimeWindowCompactionStrategy calls it (every sstable of the table is a
// candidate, every live one can block): the live sstables are those whose
// maximum local deletion time is at or after gcBefore; minTimestamp is the
// oldest minimum timestamp among them; an expired sstable is dropped
// exactly when its maximum timestamp is below minTimestamp. Its blockers
// are the live sstables whose minimum timestamp is at or below its
// maximum timestamp. Offline there are no memtables, whose oldest
// timestamp also counts on a running node.
//
// sstableexpiredblockers (tools/SSTableExpiredBlockers.java) lists the
// same pairs but takes a blocker's maximum local deletion time strictly
// after gcBefore; an sstable whose maximum local deletion time is exactly
// gcBefore blocks in compaction but not in its list. This package follows
// compaction. Beyond Cassandra's tool it counts the bytes each blocker
// holds back and finds the one sstable whose removal (or a compaction
// that drops its oldest data) would let the most bytes go.
package expired

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/stats"
)

// NoDeletionTime is the maximum local deletion time of an sstable nothing
// of which expires or is deleted (Cell.NO_DELETION_TIME).
const NoDeletionTime = stats.NoDeletionTime

// SSTable is what the rule reads of one sstable.
type SSTable struct {
	Path string `json:"sstable"` // Data.db
	// Reader is how Cassandra 5.0 names the sstable's reader in its
	// messages: BigTableReader:big or BtiTableReader:bti.
	Reader                     string `json:"-"`
	MinTimestamp, MaxTimestamp int64  // microseconds, by convention
	// MaxLocalDeletionTime is in seconds; NoDeletionTime when nothing in
	// the sstable expires or is deleted.
	MaxLocalDeletionTime int64
	// Bytes is the size of all its files on disk: what dropping it frees.
	Bytes int64 `json:"bytes"`
}

// Load reads the sstable whose Data.db is path: its Statistics.db and the
// sizes of its files.
func Load(path string) (SSTable, error) {
	d, _, err := format.ParseDescriptor(path)
	if err != nil {
		return SSTable{}, err
	}
	st, err := stats.ReadFile(d.Path(format.ComponentStatistics), d.Version)
	if err != nil {
		return SSTable{}, err
	}
	if st.Stats == nil {
		return SSTable{}, fmt.Errorf("%s: no stats metadata component", d.Path(format.ComponentStatistics))
	}
	s := SSTable{Path: path, Reader: "BigTableReader:big", MinTimestamp: st.Stats.MinTimestamp, MaxTimestamp: st.Stats.MaxTimestamp,
		MaxLocalDeletionTime: st.Stats.MaxLocalDeletionTime}
	if d.Version.IsBTI() {
		s.Reader = "BtiTableReader:bti"
	}
	ents, err := os.ReadDir(d.Dir)
	if err != nil {
		return s, err
	}
	prefix := d.Prefix()
	for _, e := range ents {
		if !e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			if fi, err := e.Info(); err == nil {
				s.Bytes += fi.Size()
			}
		}
	}
	return s, nil
}

// Expired is one fully expired sstable.
type Expired struct {
	SSTable
	// Droppable: compaction would delete it whole now.
	Droppable bool
	// BlockedBy are the indexes (into Report.SSTables) of the live
	// sstables that block it, oldest minimum timestamp first; empty when
	// Droppable.
	BlockedBy []int
}

// Blocker is a live sstable that blocks at least one expired sstable.
type Blocker struct {
	Index  int   // into Report.SSTables
	Blocks []int // the expired sstables it blocks (indexes), in order
	// BlockedBytes is the size of those: what it holds back, alone or
	// with other blockers.
	BlockedBytes int64
	// Unblocks are the expired sstables that would be dropped if this
	// sstable alone were gone (removed, or compacted so that its oldest
	// data goes): those no other live sstable blocks. UnblockedBytes is
	// their size.
	Unblocks       []int
	UnblockedBytes int64
	// OthersMinTimestamp is the oldest minimum timestamp of the other
	// live sstables (OthersLive false when there are none): the blocker
	// stops blocking anything once it holds no data older than that.
	OthersMinTimestamp int64
	OthersLive         bool
}

// Report is the analysis of one table's sstables.
type Report struct {
	SSTables []SSTable
	GCBefore int64 // seconds: now - gc_grace_seconds
	// MinLiveTimestamp is the oldest minimum timestamp of the live
	// sstables (getFullyExpiredSSTables' minTimestamp); HasLive is false
	// when every sstable has expired.
	MinLiveTimestamp int64
	HasLive          bool
	// Expired lists the fully expired sstables, in the order given.
	Expired []Expired
	// Blockers lists the live sstables that block any, in the order
	// given.
	Blockers []Blocker
	// Best is the index into Blockers of the one whose removal would let
	// the most bytes be dropped (on a tie the most sstables, then the
	// first); -1 when no blocker alone unblocks anything (each expired
	// sstable is blocked by two or more).
	Best int
	// DroppableBytes and BlockedBytes are the sizes of the expired
	// sstables compaction would drop now, and of those it cannot.
	DroppableBytes, BlockedBytes int64
}

// Analyze applies getFullyExpiredSSTables to the sstables of one table
// with gcBefore (seconds).
func Analyze(ss []SSTable, gcBefore int64) *Report {
	r := &Report{SSTables: ss, GCBefore: gcBefore, Best: -1}
	var live []int
	for i, s := range ss {
		if s.MaxLocalDeletionTime >= gcBefore {
			live = append(live, i)
			if !r.HasLive || s.MinTimestamp < r.MinLiveTimestamp {
				r.MinLiveTimestamp = s.MinTimestamp
			}
			r.HasLive = true
		}
	}
	// Blockers oldest first, then as given.
	slices.SortStableFunc(live, func(a, b int) int { return cmpInt(ss[a].MinTimestamp, ss[b].MinTimestamp) })
	for _, s := range ss {
		if s.MaxLocalDeletionTime >= gcBefore {
			continue
		}
		e := Expired{SSTable: s, Droppable: !r.HasLive || s.MaxTimestamp < r.MinLiveTimestamp}
		if !e.Droppable {
			for _, l := range live {
				if ss[l].MinTimestamp <= s.MaxTimestamp {
					e.BlockedBy = append(e.BlockedBy, l)
				}
			}
			r.BlockedBytes += s.Bytes
		} else {
			r.DroppableBytes += s.Bytes
		}
		r.Expired = append(r.Expired, e)
	}
	// The blockers, in the order given.
	blockerAt := map[int]int{} // sstable index -> index in r.Blockers
	var blockers []int
	for _, e := range r.Expired {
		for _, b := range e.BlockedBy {
			if !slices.Contains(blockers, b) {
				blockers = append(blockers, b)
			}
		}
	}
	slices.Sort(blockers)
	for _, b := range blockers {
		blockerAt[b] = len(r.Blockers)
		bl := Blocker{Index: b}
		// live is sorted oldest first: the oldest other is live[0], or
		// live[1] when b is live[0].
		for _, l := range live[:min(2, len(live))] {
			if l != b && !bl.OthersLive {
				bl.OthersMinTimestamp, bl.OthersLive = ss[l].MinTimestamp, true
			}
		}
		r.Blockers = append(r.Blockers, bl)
	}
	for ei, e := range r.Expired {
		for _, b := range e.BlockedBy {
			bl := &r.Blockers[blockerAt[b]]
			bl.Blocks = append(bl.Blocks, ei)
			bl.BlockedBytes += e.Bytes
			if len(e.BlockedBy) == 1 {
				bl.Unblocks = append(bl.Unblocks, ei)
				bl.UnblockedBytes += e.Bytes
			}
		}
	}
	for i, bl := range r.Blockers {
		if len(bl.Unblocks) == 0 {
			continue
		}
		if r.Best < 0 {
			r.Best = i
			continue
		}
		best := r.Blockers[r.Best]
		switch {
		case bl.UnblockedBytes > best.UnblockedBytes,
			bl.UnblockedBytes == best.UnblockedBytes && len(bl.Unblocks) > len(best.Unblocks):
			r.Best = i
		}
	}
	return r
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Tracing is how CompactionController's trace and sstableexpiredblockers
// print an sstable (formatForExpiryTracing): its reader, path and the
// three values the rule reads.
func (s SSTable) Tracing() string {
	abs, err := filepath.Abs(s.Path)
	if err != nil {
		abs = s.Path
	}
	return fmt.Sprintf("[%s(path='%s') (minTS = %d, maxTS = %d, maxLDT = %d)]", s.Reader, abs, s.MinTimestamp, s.MaxTimestamp, s.MaxLocalDeletionTime)
}
