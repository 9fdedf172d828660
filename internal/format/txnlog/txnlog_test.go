package txnlog

import (
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// The checksum computed independently: the bytes LogRecord.computeChecksum
// feeds CRC32, spelled out.
func TestChecksumBytes(t *testing.T) {
	path := "/var/lib/cassandra/data/ks/t-0123456789abcdef0123456789abcdef/nb-3-big-"
	r := NewRecord(Remove, path, 0x0000018c_12345678, 8)
	b := []byte(path + "REMOVE")
	b = append(b, 0x12, 0x34, 0x56, 0x78) // (int) updateTime, big-endian
	b = append(b, 0x00, 0x00, 0x01, 0x8c) // (int) (updateTime >>> 32)
	b = append(b, 0, 0, 0, 8)             // numFiles
	if want := int64(crc32.ChecksumIEEE(b)); r.Checksum != want {
		t.Fatalf("checksum %d, want %d", r.Checksum, want)
	}
	if want := fmt.Sprintf("REMOVE:[%s,%d,8][%d]", path, int64(0x0000018c_12345678), r.Checksum); r.Raw != want {
		t.Fatalf("line %q, want %q", r.Raw, want)
	}
	// COMMIT and ADD keep no time; COMMIT no path or count.
	if c := NewRecord(Commit, "x", 5, 3); c.Raw != fmt.Sprintf("COMMIT:[,0,0][%d]", crc32.ChecksumIEEE([]byte("COMMIT\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))) {
		t.Fatalf("commit %q", c.Raw)
	}
	if a := NewRecord(Add, path, 99, 8); a.UpdateTime != 0 || !strings.HasPrefix(a.Raw, "ADD:["+path+",0,8][") {
		t.Fatalf("add %q", a.Raw)
	}
}

func TestParseRoundTrip(t *testing.T) {
	for _, r := range []Record{
		NewRecord(Add, "/d/oa-5-big-", 0, 8),
		NewRecord(Remove, "/d/nb-3g1m_0nuf_3vj5m2k1125165rxa7-big-", 1707300000123, 9),
		NewRecord(Commit, "", 0, 0),
		NewRecord(Abort, "", 0, 0),
	} {
		got := ParseRecord(r.Raw)
		if got.Type != r.Type || got.Path != r.Path || got.UpdateTime != r.UpdateTime || got.NumFiles != r.NumFiles || got.Checksum != r.Checksum || !got.Valid() {
			t.Errorf("%q parsed as %+v", r.Raw, got)
		}
		if got.ComputeChecksum() != got.Checksum {
			t.Errorf("%q: checksum does not verify", r.Raw)
		}
		// Lower case is accepted (the pattern is case-insensitive).
		if l := ParseRecord(strings.ToLower(r.Raw[:3]) + r.Raw[3:]); l.Type != r.Type {
			t.Errorf("lower-case %q: %v", r.Raw, l.Type)
		}
	}
	// What Cassandra's own tests write as corrupt records.
	for _, line := range []string{
		"commit:[a,b,c][12345678]", // numbers that do not parse
		"commit:[1707300000,0,0]",  // no checksum
		"add:[ma-3-big,1707300000,4]",
		"ADD:[/d/oa-5-big-,0,8][12",   // torn
		"\x00\x00\x00\x00",            // a power loss's zeros
		"REMOVE:[/d/nb-1-big-,1,1][]", // empty checksum
	} {
		if r := ParseRecord(line); r.Valid() {
			t.Errorf("%q parsed as valid: %+v", line, r)
		}
	}
	// Spaces around numbers do not parse (Long.parseLong refuses them).
	if r := ParseRecord("commit:[1 ,0 ,0 ][5]"); r.Valid() {
		t.Error("spaces accepted")
	}
	// A valid line with a wrong checksum parses; Verify rejects it.
	r := ParseRecord("ADD:[/d/oa-5-big-,0,8][1]")
	if !r.Valid() || r.ComputeChecksum() == 1 {
		t.Fatalf("%+v", r)
	}
}

func TestLines(t *testing.T) {
	for in, want := range map[string][]string{
		"":            nil,
		"a":           {"a"},
		"a\n":         {"a"},
		"a\nb":        {"a", "b"},
		"a\r\nb\rc\n": {"a", "b", "c"},
		"a\n\nb\n":    {"a", "", "b"},
	} {
		if got := Lines([]byte(in)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Lines(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNames(t *testing.T) {
	id := NewTimeUUID()
	n := Name("oa", OpUpgrade, id)
	v, op, s, ok := ParseName(n)
	if !ok || v != "oa" || op != OpUpgrade || s != id.String() {
		t.Fatalf("%s: %q %q %q %v", n, v, op, s, ok)
	}
	u, err := ParseUUID(s)
	if err != nil || u != id || u.Version() != 1 {
		t.Fatalf("%s: %v %v", s, u, err)
	}
	// Names Cassandra writes (5.0 BTI with the format, early 3.0 without a
	// version) and ones it does not.
	for name, want := range map[string]bool{
		"nb_txn_compaction_8b4e6f50-c67c-11ee-b4a4-d93dc8a1f6a2.log":     true,
		"bti-da_txn_flush_8b4e6f50-c67c-11ee-b4a4-d93dc8a1f6a2.log":      true,
		"txn_compaction_8b4e6f50-c67c-11ee-b4a4-d93dc8a1f6a2.log":        true,
		"nb_txn_compaction_8b4e6f50-c67c-11ee-b4a4-d93dc8a1f6a2.log.tmp": false,
		"nb-1-big-Data.db": false,
	} {
		if IsLogName(name) != want {
			t.Errorf("IsLogName(%s) != %v", name, want)
		}
	}
}

// A time UUID's timestamp is now, in 100 ns ticks since 1582-10-15, and
// ids are strictly increasing.
func TestTimeUUID(t *testing.T) {
	a, b := NewTimeUUID(), NewTimeUUID()
	if b.Tick() <= a.Tick() || a.Version() != 1 || a.LSB>>62 != 2 {
		t.Fatalf("%v %v", a, b)
	}
	unixMs := a.Tick()/10000 + uuidEpoch
	if d := time.Since(time.UnixMilli(unixMs)); d < 0 || d > time.Minute {
		t.Fatalf("timestamp is %v off", d)
	}
	if FromTick(a.Tick(), a.LSB) != a {
		t.Fatal("FromTick does not invert Tick")
	}
}

// The patterns, record format and operation name are those of the Java
// source, when a Cassandra checkout is at hand
// ($SSTABLETOOL_CASSANDRA_GIT or /work/.mirror/tahiat+cassandra/repo).
func TestAgainstCassandraSource(t *testing.T) {
	repo := os.Getenv("SSTABLETOOL_CASSANDRA_GIT")
	if repo == "" {
		repo = "/work/.mirror/tahiat+cassandra/repo"
	}
	show := func(path string) string {
		out, err := exec.Command("git", "-C", repo, "show", "HEAD:"+path).Output()
		if err != nil {
			t.Skipf("no Cassandra source at %s (set SSTABLETOOL_CASSANDRA_GIT): %v", repo, err)
		}
		return string(out)
	}
	rec := show("src/java/org/apache/cassandra/db/lifecycle/LogRecord.java")
	javaString := func(src, pattern string) string {
		m := regexp.MustCompile(pattern).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("%s not found in the source", pattern)
		}
		return strings.ReplaceAll(m[1], `\\`, `\`)
	}
	if got := javaString(rec, `Pattern REGEX = Pattern\.compile\("((?:[^"\\]|\\.)*)", Pattern\.CASE_INSENSITIVE\)`); got != RecordPattern {
		t.Errorf("LogRecord.REGEX is %s, ours %s", got, RecordPattern)
	}
	if got := javaString(rec, `String\.format\("(%s:\[%s,%d,%d\]\[%d\])"`); got != "%s:[%s,%d,%d][%d]" {
		t.Errorf("record format %s", got)
	}
	for _, want := range []string{
		"crc32.update((absolutePath()).getBytes(FileUtils.CHARSET));",
		"crc32.update(type.toString().getBytes(FileUtils.CHARSET));",
		"FBUtilities.updateChecksumInt(crc32, (int) updateTime);",
		"FBUtilities.updateChecksumInt(crc32, (int) (updateTime >>> 32));",
		"FBUtilities.updateChecksumInt(crc32, numFiles);",
		"this.updateTime = type == Type.REMOVE ? updateTime : 0;",
	} {
		if !strings.Contains(rec, want) {
			t.Errorf("LogRecord.java no longer says %s", want)
		}
	}
	lf := show("src/java/org/apache/cassandra/db/lifecycle/LogFile.java")
	got := javaString(lf, `FILE_REGEX = Pattern\.compile\(String\.format\("((?:[^"\\]|\\.)*)", EXT\)\)`)
	if strings.Replace(got, "%s", `\.log`, 1) != FilePattern {
		t.Errorf("LogFile.FILE_REGEX is %s, ours %s", got, FilePattern)
	}
	fb := show("src/java/org/apache/cassandra/utils/FBUtilities.java")
	if !regexp.MustCompile(`(?s)void updateChecksumInt\(Checksum checksum, int v\)\s*\{\s*checksum\.update\(\(v >>> 24\) & 0xFF\);\s*checksum\.update\(\(v >>> 16\) & 0xFF\);\s*checksum\.update\(\(v >>> 8\) & 0xFF\);\s*checksum\.update\(\(v >>> 0\) & 0xFF\);`).MatchString(fb) {
		t.Error("FBUtilities.updateChecksumInt is no longer big-endian bytes")
	}
	ot := show("src/java/org/apache/cassandra/db/compaction/OperationType.java")
	if !strings.Contains(ot, `UPGRADE_SSTABLES("Upgrade sstables"`) || !strings.Contains(ot, `this.fileName = type.toLowerCase().replace(" ", "");`) {
		t.Error("OperationType.UPGRADE_SSTABLES's file name is no longer upgradesstables")
	}
}

// Verify and RemoveUnfinishedLeftovers on real files, at each state an
// upgrade passes through.
func TestVerifyStates(t *testing.T) {
	dir := t.TempDir()
	mk := func(prefix string, comps ...string) {
		for _, c := range comps {
			os.WriteFile(filepath.Join(dir, prefix+c), []byte(c), 0o644)
		}
	}
	old, nu := filepath.Join(dir, "nb-1-big-"), filepath.Join(dir, "oa-2-big-")
	logPath := filepath.Join(dir, Name("oa", OpUpgrade, NewTimeUUID()))
	write := func(recs ...Record) {
		var b strings.Builder
		for _, r := range recs {
			b.WriteString(r.Raw + "\n")
		}
		os.WriteFile(logPath, []byte(b.String()), 0o644)
	}
	newest := func(prefix string) (int64, int) {
		ents, _ := os.ReadDir(dir)
		var m int64
		n := 0
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), filepath.Base(prefix)) {
				fi, _ := e.Info()
				m = max(m, JavaModTime(fi))
				n++
			}
		}
		return m, n
	}
	reset := func() {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		mk("nb-1-big-", "Data.db", "Index.db", "TOC.txt")
		mk("oa-2-big-", "Data.db", "Index.db", "TOC.txt")
	}
	live := func() (o, n bool) {
		_, e1 := os.Stat(old + "Data.db")
		_, e2 := os.Stat(nu + "Data.db")
		return e1 == nil, e2 == nil
	}
	add := NewRecord(Add, nu, 0, 8)
	commit := NewRecord(Commit, "", 0, 0)
	cases := []struct {
		name           string
		log            func() string
		oldOK, newOK   bool
		warning, fails bool
	}{
		{"ADD only", func() string { return add.Raw + "\n" }, true, false, false, false},
		{"torn REMOVE", func() string {
			ut, n := newest(old)
			r := NewRecord(Remove, old, ut, n)
			return add.Raw + "\n" + r.Raw[:len(r.Raw)-3]
		}, true, false, true, false},
		{"torn COMMIT", func() string {
			ut, n := newest(old)
			return add.Raw + "\n" + NewRecord(Remove, old, ut, n).Raw + "\n" + commit.Raw[:10]
		}, true, false, true, false},
		{"committed", func() string {
			ut, n := newest(old)
			return add.Raw + "\n" + NewRecord(Remove, old, ut, n).Raw + "\n" + commit.Raw + "\n"
		}, false, true, false, false},
		{"REMOVE time does not match the disk", func() string {
			ut, n := newest(old)
			return add.Raw + "\n" + NewRecord(Remove, old, ut-5000, n).Raw + "\n" + commit.Raw + "\n"
		}, true, true, false, true},
		{"bad checksum before the last record", func() string {
			return strings.Replace(add.Raw, "][", "][9", 1) + "\n" + commit.Raw + "\n"
		}, true, true, false, true},
		{"duplicate record", func() string { return add.Raw + "\n" + add.Raw + "\n" }, true, true, false, true},
		{"record after COMMIT", func() string { return add.Raw + "\n" + commit.Raw + "\n" + NewRecord(Abort, "", 0, 0).Raw + "\n" }, true, true, false, true},
		{"aborted", func() string { return add.Raw + "\n" + NewRecord(Abort, "", 0, 0).Raw + "\n" }, true, false, false, false},
		{"empty", func() string { return "" }, true, true, false, false},
	}
	for _, c := range cases {
		reset()
		write()
		os.WriteFile(logPath, []byte(c.log()), 0o644)
		_, err := RemoveUnfinishedLeftovers(vfs.Default, dir)
		o, n := live()
		if (err != nil) != c.fails || o != c.oldOK || n != c.newOK {
			t.Errorf("%s: err %v, old live %v new live %v", c.name, err, o, n)
		}
		_, logErr := os.Stat(logPath)
		if c.fails != (logErr == nil) {
			t.Errorf("%s: log left %v", c.name, logErr == nil)
		}
	}
	// A partial deletion of the REMOVEd files, oldest first, still
	// verifies: the newest time is the last to go.
	reset()
	base := time.Now().Add(-time.Hour)
	for i, c := range []string{"Data.db", "Index.db", "TOC.txt"} {
		tm := base.Add(time.Duration(i) * time.Second)
		os.Chtimes(old+c, tm, tm)
	}
	ut, n := newest(old)
	write(add, NewRecord(Remove, old, ut, n), commit)
	os.Remove(old + "Data.db")
	l, _ := Read(logPath)
	if v := l.Verify(); !v.OK || !v.Committed || len(v.Delete) != 2 || !strings.HasSuffix(v.Delete[1].Path, "TOC.txt") {
		t.Fatalf("after a partial deletion: %+v", v)
	}
	os.Remove(old + "TOC.txt") // the newest first: the record no longer matches
	l, _ = Read(logPath)
	if v := l.Verify(); v.OK {
		t.Fatalf("the newest file deleted first still verifies: %+v", v)
	}
}
