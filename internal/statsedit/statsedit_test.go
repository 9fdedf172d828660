package statsedit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
)

// layout is where a Statistics.db keeps the bytes a mutate may change,
// found by walking the file as MetadataSerializer and
// StatsMetadataSerializer lay it out, independently of format/stats: the
// table of contents gives the stats component's offset and the next
// component's (the stats CRC32 is the 4 bytes before it, na and later);
// inside the component the fields before sstableLevel are fixed-size
// except the three histograms, whose counts say their lengths.
type layout struct {
	level, repairedAt int // offsets of the 4-byte level and 8-byte repairedAt
	statsCRC          int // offset of the stats component's CRC32; -1 before na
}

func walk(t *testing.T, b []byte, v format.Version) layout {
	t.Helper()
	i32 := func(at int) int { return int(int32(binary.BigEndian.Uint32(b[at:]))) }
	count := i32(0)
	toc := 4
	if v.HasMetadataChecksum {
		toc += 4
	}
	statsAt, next := -1, len(b)
	for i := range count {
		typ, off := i32(toc+8*i), i32(toc+8*i+4)
		if typ == 2 {
			statsAt = off
		}
		if typ == 3 {
			next = off
		}
	}
	if statsAt < 0 {
		t.Fatal("no stats component in the table of contents")
	}
	p := statsAt
	for range 2 { // partition sizes, cells per partition: int n, n x (long, long)
		p += 4 + 16*i32(p)
	}
	p += 12    // commit log upper bound: long segment, int position
	p += 8 + 8 // min, max timestamp
	p += 4 + 4 // min, max local deletion time
	p += 4 + 4 // min, max TTL
	p += 8     // compression ratio
	p += 4     // tombstone histogram: max bin size
	bin := 16  // (double point, long count) up to nc
	if v.HasUIntDeletionTime {
		bin = 12 // (long point, int count): oa, da
	}
	p += 4 + bin*i32(p)
	l := layout{level: p, repairedAt: p + 4, statsCRC: -1}
	if v.HasMetadataChecksum {
		l.statsCRC = next - 4
	}
	return l
}

// diffs lists the offsets where a and b differ (cmp -l), both the same size.
func diffs(a, b []byte) []int {
	var out []int
	for i := range a {
		if a[i] != b[i] {
			out = append(out, i)
		}
	}
	return out
}

// within reports the offsets outside the ranges [start, start+n).
func outside(offs []int, ranges ...[2]int) []int {
	var out []int
next:
	for _, o := range offs {
		for _, r := range ranges {
			if o >= r[0] && o < r[0]+r[1] {
				continue next
			}
		}
		out = append(out, o)
	}
	return out
}

// statsFixtures are the Statistics.db of every fixture version the
// tools change: nb, nc, oa and BTI da.
func statsFixtures(t *testing.T) []string {
	var out []string
	for _, p := range fixtures.DataFiles(t) {
		for _, v := range []string{"/nb/", "/nc/", "/oa/", "/da/"} {
			if strings.Contains(p, v) {
				out = append(out, p)
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d fixtures found", len(out))
	}
	return out
}

// copyStats copies an sstable's Statistics.db into a temporary directory
// and returns its descriptor there.
func copyStats(t *testing.T, data string) (format.Descriptor, []byte) {
	t.Helper()
	d, _, err := format.ParseDescriptor(data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(d.Path(format.ComponentStatistics))
	if err != nil {
		t.Fatal(err)
	}
	d.Dir = t.TempDir()
	if err := os.WriteFile(d.Path(format.ComponentStatistics), b, 0o640); err != nil {
		t.Fatal(err)
	}
	return d, b
}

// Setting repairedAt changes its 8 bytes and the stats CRC32, nothing
// else; setting the level its 4 bytes and the CRC32. The offsets come
// from walk, not from the encoder.
func TestMutateChangesOnlyTheFields(t *testing.T) {
	for _, data := range statsFixtures(t) {
		name := filepath.Base(filepath.Dir(data))
		t.Run(name, func(t *testing.T) {
			d, orig := copyStats(t, data)
			l := walk(t, orig, d.Version)
			if got := int32(binary.BigEndian.Uint32(orig[l.level:])); got != 0 {
				t.Fatalf("walk: level %d at %d, want the fixture's 0", got, l.level)
			}
			const at = int64(1_700_000_000_123)
			res, err := Mutate(nil, d, Change{Repair: &Fields{RepairedAt: at}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed || res.Before.RepairedAt != 0 || res.After.RepairedAt != at {
				t.Fatalf("result %+v", res)
			}
			now := read(t, d)
			if len(now) != len(orig) {
				t.Fatalf("size %d -> %d", len(orig), len(now))
			}
			if got := int64(binary.BigEndian.Uint64(now[l.repairedAt:])); got != at {
				t.Fatalf("repairedAt at byte %d is %d, want %d", l.repairedAt, got, at)
			}
			crc := [2]int{l.statsCRC, 4}
			if bad := outside(diffs(orig, now), [2]int{l.repairedAt, 8}, crc); len(bad) > 0 {
				t.Fatalf("bytes %v changed outside repairedAt (%d..%d) and the CRC32 (%d..%d)", bad, l.repairedAt, l.repairedAt+7, l.statsCRC, l.statsCRC+3)
			}
			if d.Version.HasMetadataChecksum && bytes.Equal(now[l.statsCRC:l.statsCRC+4], orig[l.statsCRC:l.statsCRC+4]) {
				t.Fatal("the stats CRC32 did not change")
			}
			// Back to unrepaired: the original bytes exactly.
			if _, err := Mutate(nil, d, Change{Repair: &Fields{}}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(read(t, d), orig) {
				t.Fatal("unrepaired again: not the original bytes")
			}

			lvl := int32(3)
			if _, err := Mutate(nil, d, Change{Level: &lvl}); err != nil {
				t.Fatal(err)
			}
			now = read(t, d)
			if got := int32(binary.BigEndian.Uint32(now[l.level:])); got != 3 {
				t.Fatalf("level at byte %d is %d", l.level, got)
			}
			if bad := outside(diffs(orig, now), [2]int{l.level, 4}, crc); len(bad) > 0 {
				t.Fatalf("bytes %v changed outside the level (%d..%d) and the CRC32", bad, l.level, l.level+3)
			}
			if f, err := Read(d); err != nil || f.Level != 3 {
				t.Fatalf("Read: %+v %v", f, err)
			}
			fi, _ := os.Stat(d.Path(format.ComponentStatistics))
			if fi.Mode().Perm() != 0o640 {
				t.Fatalf("mode %v, want the original's 0640", fi.Mode().Perm())
			}
			if _, err := os.Stat(d.Path(format.ComponentStatistics) + TmpSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("temporary file left: %v", err)
			}
		})
	}
}

func read(t *testing.T, d format.Descriptor) []byte {
	t.Helper()
	b, err := os.ReadFile(d.Path(format.ComponentStatistics))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A pending repair (an sstable of an unfinished incremental repair
// session) takes 16 bytes more: adding one moves the serialization
// header; clearing it, as sstablerepairedset does, gives back the
// original file byte for byte.
func TestPendingRepair(t *testing.T) {
	d, orig := copyStats(t, fixtures.Table(t, "nb", "legacy_nb_clust")+"/nb-1-big-Data.db")
	session := stats.UUID{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x11, 0xee, 0x80, 0, 0, 0, 0, 0, 0, 1}
	if _, err := Mutate(nil, d, Change{Repair: &Fields{PendingRepair: &session, IsTransient: true}}); err != nil {
		t.Fatal(err)
	}
	pending := read(t, d)
	if len(pending) != len(orig)+16 {
		t.Fatalf("size %d -> %d, want 16 more", len(orig), len(pending))
	}
	if !bytes.Contains(pending, session[:]) {
		t.Fatal("the session id is not in the file")
	}
	f, err := Read(d)
	if err != nil || f.PendingRepair == nil || *f.PendingRepair != session || !f.IsTransient {
		t.Fatalf("Read: %+v %v", f, err)
	}
	res, err := Mutate(nil, d, Change{Repair: &Fields{RepairedAt: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Before.PendingRepair == nil || res.After.PendingRepair != nil {
		t.Fatalf("result %+v", res)
	}
	if !bytes.Equal(read(t, d), orig) {
		t.Fatal("cleared: not the original bytes")
	}
	// The same values again: nothing is written.
	if res, err := Mutate(nil, d, Change{Repair: &Fields{}}); err != nil || res.Changed {
		t.Fatalf("second clear: %+v %v", res, err)
	}
}

// A version before na stores no pending repair: refused, file untouched.
func TestPendingRepairBeforeNA(t *testing.T) {
	dir := fixtures.Table(t, "me-collections", "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91")
	d, orig := copyStats(t, filepath.Join(dir, "me-1-big-Data.db"))
	u := stats.UUID{1}
	if _, err := Mutate(nil, d, Change{Repair: &Fields{PendingRepair: &u}}); err == nil || !strings.Contains(err.Error(), "stores no pending repair") {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Equal(read(t, d), orig) {
		t.Fatal("file changed")
	}
	// repairedAt exists in me: set, then cleared.
	if _, err := Mutate(nil, d, Change{Repair: &Fields{RepairedAt: 42}}); err != nil {
		t.Fatal(err)
	}
	if f, _ := Read(d); f.RepairedAt != 42 {
		t.Fatalf("repairedAt %d", f.RepairedAt)
	}
}

// ScyllaDB writes the table of contents in the order 3,2,0,1; Cassandra
// (and format/stats) would write 0,1,2,3, changing every offset: refused
// rather than rewritten.
func TestRefusesWhatItCannotReproduce(t *testing.T) {
	src := filepath.Join(fixtures.Dir(t), "realworld", "scylla", "3.x", "uncompressed", "write_shadowable_deletion", "mc-1-big-Data.db")
	d, orig := copyStats(t, src)
	lvl := int32(1)
	_, err := Mutate(nil, d, Change{Level: &lvl})
	if err == nil || !strings.Contains(err.Error(), "refusing to rewrite it") || !strings.Contains(err.Error(), d.Path(format.ComponentStatistics)) {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Equal(read(t, d), orig) {
		t.Fatal("file changed")
	}
}

// A kill before any change to the disk leaves the old file, after the
// rename the new one; never anything else under the name, and a
// temporary file left behind is overwritten by the next run.
func TestMutateCrash(t *testing.T) {
	src := fixtures.Table(t, "oa", "legacy_oa_simple") + "/oa-1-big-Data.db"
	lvl := int32(2)
	var want []byte
	{
		d, _ := copyStats(t, src)
		if _, err := Mutate(nil, d, Change{Level: &lvl}); err != nil {
			t.Fatal(err)
		}
		want = read(t, d)
	}
	for n := int64(0); ; n++ {
		d, orig := copyStats(t, src)
		efs := errorfs.New(vfs.Default).CrashAt(n, errorfs.Changes)
		_, err := Mutate(efs, d, Change{Level: &lvl})
		if !efs.Crashed() {
			if err != nil {
				t.Fatal(err)
			}
			if n < 3 {
				t.Fatalf("only %d changes to the disk", n)
			}
			break
		}
		now := read(t, d)
		if !bytes.Equal(now, orig) && !bytes.Equal(now, want) {
			t.Fatalf("crash before change %d: Statistics.db is neither the old nor the new file", n)
		}
		// The next run finishes the job.
		if _, err := Mutate(nil, d, Change{Level: &lvl}); err != nil {
			t.Fatalf("after crash %d: %v", n, err)
		}
		if !bytes.Equal(read(t, d), want) {
			t.Fatalf("after crash %d: not the new file", n)
		}
		if _, err := os.Stat(d.Path(format.ComponentStatistics) + TmpSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("after crash %d: temporary file left", n)
		}
	}
}

// A failed fsync stops the mutate before the rename: the old file stays.
func TestMutateFsyncFails(t *testing.T) {
	d, orig := copyStats(t, fixtures.Table(t, "nc", "legacy_nc_simple")+"/nc-1-big-Data.db")
	efs := errorfs.New(vfs.Default).FailSync(func(p string) bool { return strings.HasSuffix(p, TmpSuffix) })
	lvl := int32(1)
	if _, err := Mutate(efs, d, Change{Level: &lvl}); err == nil || !strings.Contains(err.Error(), "fsync") {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Equal(read(t, d), orig) {
		t.Fatal("file changed")
	}
	if _, err := os.Stat(d.Path(format.ComponentStatistics) + TmpSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("temporary file left")
	}
}

func ExampleRelevel() {
	// Keys as single bytes in token order (ByteOrderedPartitioner).
	ss := []Leveled{
		{First: []byte{0}, Last: []byte{9}, Level: 0}, // the whole range
		{First: []byte{0}, Last: []byte{3}, Level: 1}, // L1 [0,3]
		{First: []byte{4}, Last: []byte{7}, Level: 1}, // L1 [4,7]
		{First: []byte{8}, Last: []byte{9}, Level: 1}, // L1 [8,9]
		{First: []byte{0}, Last: []byte{1}, Level: 2}, // ...
		{First: []byte{2}, Last: []byte{3}, Level: 2},
		{First: []byte{4}, Last: []byte{5}, Level: 2},
		{First: []byte{6}, Last: []byte{7}, Level: 2},
		{First: []byte{8}, Last: []byte{8}, Level: 2},
		{First: []byte{9}, Last: []byte{9}, Level: 2},
		{First: []byte{5}, Last: []byte{6}, Level: 0},
	}
	lv := Relevel(ss, bytes.Compare)
	fmt.Println("current", lv.Current)
	fmt.Println("new", lv.New)
	fmt.Println("levels", lv.Levels)
	// Output:
	// current [2 3 6]
	// new [2 3 6]
	// levels [0 1 0 1 2 2 2 2 2 2 1]
}
