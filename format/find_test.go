package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// copySSTable copies the files of a fixture sstable into dir, renamed to
// the given prefix ("nc-2-big-").
func copySSTable(t *testing.T, group, name, dir, prefix string) {
	t.Helper()
	src := fixtures.Table(t, group, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		parts := strings.SplitN(e.Name(), "-", 4)
		if len(parts) != 4 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, prefix+parts[3]), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// txnRecordLine formats a record as LogRecord.format does, checksum
// included (LogRecord.computeChecksum).
func txnRecordLine(typ, path string, updateTime int64, files int) string {
	h := crc32.NewIEEE()
	h.Write([]byte(path))
	h.Write([]byte(typ))
	var b [4]byte
	for _, v := range []uint32{uint32(updateTime), uint32(updateTime >> 32), uint32(files)} {
		binary.BigEndian.PutUint32(b[:], v)
		h.Write(b[:])
	}
	return fmt.Sprintf("%s:[%s,%d,%d][%d]\n", typ, path, updateTime, files, uint64(h.Sum32()))
}

func relPaths(t *testing.T, root string, fs []Found) []string {
	var out []string
	for _, f := range fs {
		r, err := filepath.Rel(root, f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if f.Err != nil {
			r += " ERROR"
		}
		out = append(out, r)
	}
	return out
}

// A data directory as a node leaves it: a live sstable, a snapshot and an
// incremental backup of it, the staging directory of a killed convert, the
// output of an unfinished compaction (its transaction log has no COMMIT)
// and the input of a committed one whose files were not deleted yet.
func TestFindSkipsWhatIsNotLiveData(t *testing.T) {
	root := t.TempDir()
	tbl := filepath.Join(root, "ks", "t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2")
	copySSTable(t, "nc", "legacy_nc_simple", tbl, "nc-1-big-")
	copySSTable(t, "nc", "legacy_nc_simple", filepath.Join(tbl, "snapshots", "before-upgrade"), "nc-1-big-")
	copySSTable(t, "nc", "legacy_nc_simple", filepath.Join(tbl, "backups"), "nc-1-big-")
	copySSTable(t, "oa", "legacy_oa_simple", filepath.Join(root, "ks", StagingDirPrefix+"t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2-3861"), "oa-1-big-")
	// An unfinished compaction wrote nc-2 and was to remove nc-1.
	copySSTable(t, "nc", "legacy_nc_simple", tbl, "nc-2-big-")
	node := "/var/lib/cassandra/data/ks/t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2/"
	log := txnRecordLine("ADD", node+"nc-2-big-", 0, 8) + txnRecordLine("REMOVE", node+"nc-1-big-", 1708000000000, 8)
	os.WriteFile(filepath.Join(tbl, "nc_txn_compaction_4a4e3f70-c67c-11ee-b4a4-d93dc8a1f6a2.log"), []byte(log), 0o644)
	// A committed one removed nc-3 (still on disk) and added nc-4.
	copySSTable(t, "nc", "legacy_nc_simple", tbl, "nc-3-big-")
	copySSTable(t, "nc", "legacy_nc_simple", tbl, "nc-4-big-")
	log = txnRecordLine("ADD", node+"nc-4-big-", 0, 8) + txnRecordLine("REMOVE", node+"nc-3-big-", 1708000000000, 8) +
		txnRecordLine("COMMIT", "", 1708000001000, 0)
	os.WriteFile(filepath.Join(tbl, "nc_txn_compaction_5b5e3f70-c67c-11ee-b4a4-d93dc8a1f6a2.log"), []byte(log), 0o644)

	res := Find([]string{root}, FindOptions{Recursive: true})
	got := strings.Join(relPaths(t, root, res.SSTables), " ")
	want := "ks/t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2/nc-1-big-Data.db ks/t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2/nc-4-big-Data.db"
	if got != want {
		t.Errorf("found %s\nwant  %s", got, want)
	}
	reasons := map[string]SkipReason{}
	for _, s := range res.Skipped {
		r, _ := filepath.Rel(root, s.Path)
		reasons[r] = s.Reason
		if s.Reason == SkipUnfinished && !strings.Contains(s.Detail, "_txn_compaction_") {
			t.Errorf("%s: detail %q does not name the log", r, s.Detail)
		}
	}
	wantSkips := map[string]SkipReason{
		"ks/" + StagingDirPrefix + "t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2-3861": SkipStaging,
		"ks/t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2/backups":                      SkipBackups,
		"ks/t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2/snapshots":                    SkipSnapshots,
		"ks/t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2/nc-2-big-Data.db":             SkipUnfinished,
		"ks/t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2/nc-3-big-Data.db":             SkipUnfinished,
	}
	if fmt.Sprint(reasons) != fmt.Sprint(wantSkips) {
		t.Errorf("skipped %v\nwant    %v", reasons, wantSkips)
	}

	// Asked for, snapshots and backups are scanned; staging never.
	res = Find([]string{root}, FindOptions{Recursive: true, Snapshots: true, Backups: true})
	if n := len(res.SSTables); n != 4 {
		t.Errorf("with --snapshots --backups: %d sstables %v, want 4", n, relPaths(t, root, res.SSTables))
	}
	// Without -r nothing below is entered, and the logs still count.
	res = Find([]string{tbl}, FindOptions{})
	if got := strings.Join(relPaths(t, tbl, res.SSTables), " "); got != "nc-1-big-Data.db nc-4-big-Data.db" {
		t.Errorf("table directory: found %s", got)
	}
	// A directory or file named explicitly is taken as it is.
	res = Find([]string{filepath.Join(tbl, "snapshots", "before-upgrade"), filepath.Join(tbl, "nc-2-big-Index.db")}, FindOptions{})
	if got := strings.Join(relPaths(t, tbl, res.SSTables), " "); got != "snapshots/before-upgrade/nc-1-big-Data.db nc-2-big-Data.db" {
		t.Errorf("explicit paths: found %s", got)
	}
}

// FIFOs and devices are refused at once, naming the path; the scan goes on.
func TestFindRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	copySSTable(t, "oa", "legacy_oa_simple", a, "oa-1-big-")
	copySSTable(t, "oa", "legacy_oa_simple", b, "oa-1-big-")
	fifo := filepath.Join(a, "oa-1-big-Index.db")
	os.Remove(fifo)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	lone := filepath.Join(dir, "nc-9-big-Data.db")
	if err := syscall.Mkfifo(lone, 0o644); err != nil {
		t.Fatal(err)
	}
	res := Find([]string{a, lone, filepath.Join(dir, "missing"), filepath.Join(b, "oa-1-big-TOC.txt"), "/dev/null"}, FindOptions{})
	if len(res.SSTables) != 5 {
		t.Fatalf("found %v", res.SSTables)
	}
	var nr *NotRegularError
	for i, want := range []string{fifo + " is a named pipe (FIFO)", lone + " is a named pipe (FIFO)", "no such file", "", "/dev/null is a character device"} {
		f := res.SSTables[i]
		switch {
		case want == "" && f.Err != nil:
			t.Errorf("%s: %v", f.Path, f.Err)
		case want != "" && (f.Err == nil || !strings.Contains(f.Err.Error(), want)):
			t.Errorf("%s: error %v, want %q", f.Path, f.Err, want)
		case strings.Contains(want, " is a ") && !errors.As(f.Err, &nr):
			t.Errorf("%s: %T is not a *NotRegularError", f.Path, f.Err)
		}
	}
	if res.Failed() != 4 {
		t.Errorf("Failed() = %d, want 4", res.Failed())
	}
	// The old interface stops at the first error, as it always did.
	if _, err := FindSSTables([]string{a}, false); !errors.As(err, &nr) {
		t.Errorf("FindSSTables: %v", err)
	}
}

// Names that are no sstable's are reported, not fatal.
func TestFindReportsBadNames(t *testing.T) {
	dir := t.TempDir()
	copySSTable(t, "oa", "legacy_oa_simple", dir, "oa-1-big-")
	os.WriteFile(filepath.Join(dir, "ks-t-ka-1-Data.db"), nil, 0o644) // Cassandra 2.1 naming
	res := Find([]string{dir}, FindOptions{})
	got := relPaths(t, dir, res.SSTables)
	if strings.Join(got, " ") != "ks-t-ka-1-Data.db ERROR oa-1-big-Data.db" {
		t.Errorf("found %v", got)
	}
}

// An sstable whose Data.db is gone but whose other components are still
// there (a convert killed between renames) is a failed entry naming what
// is left, not passed over; leftovers of a transaction stay skipped.
func TestFindReportsMissingData(t *testing.T) {
	dir := t.TempDir()
	copySSTable(t, "oa", "legacy_oa_simple", dir, "oa-1-big-")
	copySSTable(t, "oa", "legacy_oa_simple", dir, "oa-2-big-")
	copySSTable(t, "oa", "legacy_oa_simple", dir, "oa-3-big-")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "oa-2-big-") && !strings.HasSuffix(n, "-Index.db") && !strings.HasSuffix(n, "-Statistics.db") && !strings.HasSuffix(n, "-TOC.txt") {
			os.Remove(filepath.Join(dir, n))
		}
	}
	os.Remove(filepath.Join(dir, "oa-3-big-Data.db"))
	log := txnRecordLine("ADD", "/var/lib/cassandra/data/ks/t/oa-3-big-", 0, 8)
	os.WriteFile(filepath.Join(dir, "oa_txn_compaction_4a4e3f70-c67c-11ee-b4a4-d93dc8a1f6a2.log"), []byte(log), 0o644)
	os.WriteFile(filepath.Join(dir, "notes-about-this-table.txt"), nil, 0o644) // no sstable's name

	res := Find([]string{dir}, FindOptions{})
	if got := strings.Join(relPaths(t, dir, res.SSTables), " "); got != "oa-1-big-Data.db oa-2-big-Data.db ERROR" {
		t.Fatalf("found %s", got)
	}
	var md *MissingDataError
	if err := res.SSTables[1].Err; !errors.As(err, &md) || !strings.Contains(err.Error(), "Data.db is missing; found only Index.db, Statistics.db, TOC.txt of this sstable") {
		t.Errorf("error %v, want one naming the components found and the missing Data.db", err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Reason != SkipUnfinished || filepath.Base(res.Skipped[0].Path) != "oa-3-big-Data.db" {
		t.Errorf("skipped %+v, want oa-3 as a transaction leftover", res.Skipped)
	}
}
