package expired

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// fullyExpired is CompactionController.getFullyExpiredSSTables written out
// as the Java reads, with compacting and overlapping both every sstable
// (TimeWindowCompactionStrategy's call) and no memtable: the indexes of
// the sstables compaction drops.
func fullyExpired(ss []SSTable, gcBefore int64) []int {
	var candidates []int
	minTimestamp := int64(math.MaxInt64)
	for _, s := range ss { // overlapping
		if s.MaxLocalDeletionTime >= gcBefore {
			minTimestamp = min(minTimestamp, s.MinTimestamp)
		}
	}
	for i, s := range ss { // compacting
		if s.MaxLocalDeletionTime < gcBefore {
			candidates = append(candidates, i)
		} else {
			minTimestamp = min(minTimestamp, s.MinTimestamp)
		}
	}
	var out []int
	for _, i := range candidates {
		if ss[i].MaxTimestamp < minTimestamp {
			out = append(out, i)
		}
	}
	return out
}

// toolBlockers is SSTableExpiredBlockers.checkForExpiredSSTableBlockers,
// with its blocker test (maxLDT > gcBefore) widened to compaction's
// (>= gcBefore): blocker -> blocked.
func toolBlockers(ss []SSTable, gcBefore int64) map[int][]int {
	out := map[int][]int{}
	for i, s := range ss {
		if s.MaxLocalDeletionTime < gcBefore {
			for j, b := range ss {
				if j != i && b.MinTimestamp <= s.MaxTimestamp && b.MaxLocalDeletionTime >= gcBefore {
					out[j] = append(out[j], i)
				}
			}
		}
	}
	return out
}

// check holds Analyze to the two oracles: what is dropped, who blocks
// whom, and for each blocker what removing it alone would drop.
func check(t *testing.T, ss []SSTable, gcBefore int64) *Report {
	t.Helper()
	r := Analyze(ss, gcBefore)
	var dropped []int
	expiredIdx := map[int]int{} // sstable -> index in r.Expired
	for ei, e := range r.Expired {
		i := slices.IndexFunc(ss, func(s SSTable) bool { return s.Path == e.Path })
		expiredIdx[i] = ei
		if e.Droppable {
			dropped = append(dropped, i)
		}
		if e.Droppable != (len(e.BlockedBy) == 0) {
			t.Fatalf("%s: droppable %v with %d blockers", e.Path, e.Droppable, len(e.BlockedBy))
		}
	}
	if want := fullyExpired(ss, gcBefore); !slices.Equal(dropped, want) {
		t.Fatalf("dropped %v, getFullyExpiredSSTables drops %v", dropped, want)
	}
	tb := toolBlockers(ss, gcBefore)
	if len(tb) != len(r.Blockers) {
		t.Fatalf("%d blockers, the tool finds %d: %v", len(r.Blockers), len(tb), tb)
	}
	for _, bl := range r.Blockers {
		var got []int
		for _, ei := range bl.Blocks {
			got = append(got, slices.IndexFunc(ss, func(s SSTable) bool { return s.Path == r.Expired[ei].Path }))
		}
		if !slices.Equal(got, tb[bl.Index]) {
			t.Fatalf("blocker %d blocks %v, the tool says %v", bl.Index, got, tb[bl.Index])
		}
		// Without it, compaction drops what it dropped, and Unblocks.
		rest := slices.Delete(slices.Clone(ss), bl.Index, bl.Index+1)
		othersMin, othersLive := int64(math.MaxInt64), false
		for _, s := range rest {
			if s.MaxLocalDeletionTime >= gcBefore {
				othersMin, othersLive = min(othersMin, s.MinTimestamp), true
			}
		}
		if othersLive != bl.OthersLive || othersLive && othersMin != bl.OthersMinTimestamp {
			t.Fatalf("blocker %d: others' oldest %d (%v), want %d (%v)", bl.Index, bl.OthersMinTimestamp, bl.OthersLive, othersMin, othersLive)
		}
		var after []int
		for _, i := range fullyExpired(rest, gcBefore) {
			if i >= bl.Index {
				i++
			}
			after = append(after, i)
		}
		want := []int{}
		for _, i := range after {
			if !slices.Contains(dropped, i) {
				want = append(want, expiredIdx[i])
			}
		}
		got = append([]int{}, bl.Unblocks...)
		if !slices.Equal(got, want) {
			t.Fatalf("blocker %d unblocks %v, without it compaction would also drop %v", bl.Index, got, want)
		}
		var bytes int64
		for _, ei := range want {
			bytes += r.Expired[ei].Bytes
		}
		if bytes != bl.UnblockedBytes {
			t.Fatalf("blocker %d: %d unblocked bytes, want %d", bl.Index, bl.UnblockedBytes, bytes)
		}
	}
	return r
}

// The TWCS picture: windows w1..w5 of an hour each, their data expiring
// with a two-hour TTL; at now = 6h with gc_grace 0, w1..w4 are fully
// expired (window k's newest deletion time is (k+3)h - 1s). A late write
// with w3's timestamps and no TTL (late) and an sstable of live data
// reaching back into w4 (mixed) are live.
func TestTWCS(t *testing.T) {
	const h = int64(3600)
	us := func(s int64) int64 { return s * 1_000_000 }
	window := func(name string, k int64, bytes int64) SSTable {
		return SSTable{Path: name, MinTimestamp: us(k * h), MaxTimestamp: us((k+1)*h) - 1, MaxLocalDeletionTime: (k+1)*h - 1 + 2*h, Bytes: bytes}
	}
	ss := []SSTable{
		window("w1", 0, 100), window("w2", 1, 200), window("w3", 2, 400), window("w4", 3, 800), window("w5", 4, 1600),
		{Path: "late", MinTimestamp: us(2*h + 10), MaxTimestamp: us(6 * h), MaxLocalDeletionTime: NoDeletionTime, Bytes: 50},
		{Path: "mixed", MinTimestamp: us(3*h + 5), MaxTimestamp: us(6 * h), MaxLocalDeletionTime: NoDeletionTime, Bytes: 70},
	}
	r := check(t, ss, 6*h)
	// By hand: minTimestamp = min(w5 4h, late 2h+10s, mixed 3h+5s) =
	// late's. w1 (newest 1h-1µs) and w2 (2h-1µs) are older: dropped. w3
	// (3h-1µs) is blocked by late alone; w4 (4h-1µs) by late and mixed;
	// w5's oldest (4h) is newer than w4's newest: it blocks nothing.
	want := map[string]string{"w1": "dropped", "w2": "dropped", "w3": "late", "w4": "late mixed"}
	for _, e := range r.Expired {
		got := "dropped"
		if !e.Droppable {
			got = ""
			for i, b := range e.BlockedBy {
				if i > 0 {
					got += " "
				}
				got += ss[b].Path
			}
		}
		if got != want[e.Path] {
			t.Errorf("%s: %q, want %q", e.Path, got, want[e.Path])
		}
	}
	if len(r.Expired) != 4 || r.DroppableBytes != 300 || r.BlockedBytes != 1200 {
		t.Fatalf("expired %d, droppable %d, blocked %d bytes", len(r.Expired), r.DroppableBytes, r.BlockedBytes)
	}
	// late holds back 1200 bytes, but alone only w3 (400) would go:
	// mixed still blocks w4. mixed alone unblocks nothing.
	if len(r.Blockers) != 2 {
		t.Fatalf("%d blockers", len(r.Blockers))
	}
	best := r.Blockers[r.Best]
	if ss[best.Index].Path != "late" || best.BlockedBytes != 1200 || best.UnblockedBytes != 400 {
		t.Fatalf("best %+v", best)
	}
}

// An sstable whose maximum local deletion time is exactly gcBefore is not
// expired, and it blocks (compaction's >=; sstableexpiredblockers' >
// would not list it).
func TestAtGCBefore(t *testing.T) {
	ss := []SSTable{
		{Path: "old", MinTimestamp: 10, MaxTimestamp: 20, MaxLocalDeletionTime: 99},
		{Path: "edge", MinTimestamp: 5, MaxTimestamp: 30, MaxLocalDeletionTime: 100},
	}
	r := check(t, ss, 100)
	if len(r.Expired) != 1 || r.Expired[0].Droppable || len(r.Blockers) != 1 || r.Blockers[0].Index != 1 {
		t.Fatalf("%+v", r)
	}
}

// Everything expired: nothing live to block, all dropped.
func TestAllExpired(t *testing.T) {
	ss := []SSTable{{Path: "a", MaxTimestamp: 5, MaxLocalDeletionTime: 1}, {Path: "b", MinTimestamp: 1, MaxTimestamp: 9, MaxLocalDeletionTime: 2}}
	r := check(t, ss, 100)
	if r.HasLive || len(r.Blockers) != 0 || r.Best != -1 || !r.Expired[0].Droppable || !r.Expired[1].Droppable {
		t.Fatalf("%+v", r)
	}
}

// FuzzAnalyzeMatchesCompaction holds Analyze to getFullyExpiredSSTables
// and the tool's blocker test on arbitrary tables of up to 12 sstables.
func FuzzAnalyzeMatchesCompaction(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, int64(50))
	f.Add([]byte{0, 0, 0, 255, 255, 255, 9, 9, 9}, int64(0))
	f.Fuzz(func(t *testing.T, b []byte, gcBefore int64) {
		var ss []SSTable
		for i := 0; i+3 <= len(b) && len(ss) < 12; i += 3 {
			lo, span, ldt := int64(b[i]), int64(b[i+1]%64), int64(b[i+2])
			if ldt == 255 {
				ldt = NoDeletionTime
			}
			ss = append(ss, SSTable{Path: string(binary.AppendUvarint([]byte("s"), uint64(i))), MinTimestamp: lo, MaxTimestamp: lo + span,
				MaxLocalDeletionTime: ldt, Bytes: int64(b[i+1]) + 1})
		}
		check(t, ss, gcBefore%300)
	})
}

// On a TWCS-like history the generator wrote (five one-hour windows, a
// two-hour TTL, a late sstable with window 2's timestamps and no TTL), at
// the end of the last window with gc_grace 0, the rule worked out by hand
// from the windows: window k's newest deletion time is before
// (k+1)h + 2h, so windows 1..3 (k = 0..2, 5h at most) have expired and 4
// and 5 have not. The oldest live data is the late sstable's (window 2's
// start, older than window 4's); window 1 ends before it: dropped;
// windows 2 and 3 end after it: blocked, by the late sstable alone (window
// 4 starts after window 3 ends). The bytes are their files' sizes on disk.
func TestGeneratedTWCS(t *testing.T) {
	p, err := workload.ParseProfile([]byte(generate.HistoryProfile), "history")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 60
	dir := t.TempDir()
	res, err := generate.GenerateHistory(p, dir, generate.HistoryOptions{SSTables: 5, Window: 3600, TTL: 7200, LateWindow: 2})
	if err != nil {
		t.Fatal(err)
	}
	var ss []SSTable
	for _, path := range res.DataPaths {
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	r := check(t, ss, res.Now)
	onDisk := func(i int) int64 {
		files, _ := filepath.Glob(strings.TrimSuffix(res.DataPaths[i], "Data.db") + "*")
		var n int64
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
		return n
	}
	if len(r.Expired) != 3 || r.Expired[0].Path != res.DataPaths[0] || !r.Expired[0].Droppable {
		t.Fatalf("expired %+v", r.Expired)
	}
	for _, e := range r.Expired[1:] {
		if e.Droppable || len(e.BlockedBy) != 1 || e.BlockedBy[0] != 5 {
			t.Fatalf("%s: droppable %v, blocked by %v; want blocked by the late sstable (5)", e.Path, e.Droppable, e.BlockedBy)
		}
	}
	if len(r.Blockers) != 1 || r.Best != 0 {
		t.Fatalf("blockers %+v, best %d", r.Blockers, r.Best)
	}
	b := r.Blockers[0]
	want := onDisk(1) + onDisk(2)
	if b.BlockedBytes != want || b.UnblockedBytes != want || r.BlockedBytes != want || r.DroppableBytes != onDisk(0) {
		t.Fatalf("blocked %d, unblocked %d, report %d/%d; files on disk: %d blocked, %d droppable", b.BlockedBytes, b.UnblockedBytes, r.BlockedBytes, r.DroppableBytes, want, onDisk(0))
	}
	if !b.OthersLive || b.OthersMinTimestamp != ss[3].MinTimestamp {
		t.Fatalf("others' oldest %d, want window 4's %d", b.OthersMinTimestamp, ss[3].MinTimestamp)
	}
}
