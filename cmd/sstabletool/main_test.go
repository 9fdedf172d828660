package main

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/testindexes"
	"github.com/sstabletool/sstabletool/internal/testtables"
	"github.com/sstabletool/sstabletool/internal/upgrade"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script/*.txtar")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"sstabletool": func() { os.Exit(run(os.Args)) },
	})
}

// TestScripts runs the end-to-end scripts in testdata/script: each runs
// the real binary on the real fixtures ($FIXTURES is ../shared/testdata/cassandra)
// and compares its output with what the script holds. Refresh with -update.
func TestScripts(t *testing.T) {
	root := fixtures.Dir(t)
	schemas, err := filepath.Abs("../../format/cqltype/testdata")
	if err != nil {
		t.Fatal(err)
	}
	stress, err := filepath.Abs("../../workload/testdata/stress")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"cpdir":        cmdCpdir,
			"flipbyte":     cmdFlipbyte,
			"poke":         cmdPoke,
			"truncate":     cmdTruncate,
			"mkfifo":       cmdMkfifo,
			"cpsstable":    cmdCpsstable,
			"upgradecrash": cmdUpgradeCrash,
			"cmpnopos":     cmdCmpNoPos,
			"mkindexes":    cmdMkindexes,
			"mkdropnode":   cmdMkdropnode,
			"mknode":       cmdMknode,
			"mklog":        cmdMklog,
			"systemschema": cmdSystemSchema,
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", root+"/cassandra")
			env.Setenv("REALWORLD", root+"/realworld") // real writers' sstables, Cassandra's damaged-file test data
			env.Setenv("SCHEMAS", schemas)             // CQL files, e.g. DESCRIBE KEYSPACE output
			env.Setenv("STRESS", stress)               // Cassandra's example cassandra-stress profiles
			env.Setenv("NO_COLOR", "1")
			// A binary built with -race sleeps a second at exit
			// (ThreadSanitizer's atexit_sleep_ms) unless told not to: a
			// second of nothing for each of the scripts' hundreds of execs.
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			return nil
		},
	})
}

// cpdir SRC DST copies the files of an sstable directory into the work
// dir, writable, so a script can damage the copy and never the fixture.
func cmdCpdir(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: cpdir SRC DST")
	}
	dst := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(dst, 0o755))
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(ts.MkAbs(args[0]), e.Name()))
		ts.Check(err)
		ts.Check(os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
}

// flipbyte FILE OFFSET inverts every bit of one byte.
func cmdFlipbyte(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: flipbyte FILE OFFSET")
	}
	p := ts.MkAbs(args[0])
	off, err := strconv.Atoi(args[1])
	ts.Check(err)
	b, err := os.ReadFile(p)
	ts.Check(err)
	if off >= len(b) {
		ts.Fatalf("flipbyte: offset %d beyond %d bytes", off, len(b))
	}
	b[off] ^= 0xFF
	ts.Check(os.WriteFile(p, b, 0o644))
}

// poke FILE OFFSET HEX overwrites bytes at OFFSET with HEX's (a zeroed
// range, a count of 2^31-1, one bit flipped).
func cmdPoke(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: poke FILE OFFSET HEX")
	}
	p := ts.MkAbs(args[0])
	off, err := strconv.Atoi(args[1])
	ts.Check(err)
	v, err := hex.DecodeString(args[2])
	ts.Check(err)
	b, err := os.ReadFile(p)
	ts.Check(err)
	if off+len(v) > len(b) {
		ts.Fatalf("poke: %d bytes at %d go beyond the %d-byte file", len(v), off, len(b))
	}
	copy(b[off:], v)
	ts.Check(os.WriteFile(p, b, 0o644))
}

// truncate FILE SIZE cuts a file short.
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: truncate FILE SIZE")
	}
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	ts.Check(os.Truncate(ts.MkAbs(args[0]), n))
}

// mkfifo PATH makes a named pipe: a command that opened it for reading
// would block until a writer came, so it must be refused by its type.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
}

// cpsstable SRC DST GEN copies the sstable of a fixture directory into
// DST under generation GEN (an integer, or a UUID id's base-36 text).
func cmdCpsstable(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: cpsstable SRC DST GEN")
	}
	dst := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(dst, 0o755))
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	for _, e := range entries {
		d, comp, err := format.ParseDescriptor(e.Name())
		if err != nil || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(ts.MkAbs(args[0]), e.Name()))
		ts.Check(err)
		d.Dir, d.Generation = dst, args[2]
		ts.Check(os.WriteFile(d.Path(comp), b, 0o644))
	}
}

// cmpnopos A B compares two sstabledump outputs with their "position"
// members left out: a partition that moved to another sstable (split,
// filter) prints the same otherwise.
func cmdCmpNoPos(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: cmpnopos A B")
	}
	pos := regexp.MustCompile(`\s*"position" ?: ?[0-9]+,?`)
	read := func(name string) string {
		if name == "stdout" {
			return pos.ReplaceAllString(ts.ReadFile(name), "")
		}
		b, err := os.ReadFile(ts.MkAbs(name))
		ts.Check(err)
		return pos.ReplaceAllString(string(b), "")
	}
	a, b := read(args[0]), read(args[1])
	if (a == b) == neg {
		ts.Fatalf("%s and %s differ (positions aside): %v", args[0], args[1], !neg)
	}
}

// mkindexes DATA [COLUMN] writes beside the sstable DATA (a Data.db path)
// a complete SAI build of an index val_sai (internal/testindexes, in the
// layout of Cassandra 5.0's writer) and, with COLUMN, a SASI index
// val_sasi of that text column, and lists them in TOC.txt as Cassandra
// does.
func cmdMkindexes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: mkindexes DATA [COLUMN]")
	}
	data := ts.MkAbs(args[0])
	s, err := sstable.Open(data, sstable.Options{})
	ts.Check(err)
	wide := len(s.ClusteringTypes()) > 0
	s.Close()
	names, err := testindexes.SAI(data, wide, "val_sai")
	ts.Check(err)
	if len(args) == 2 {
		n, err := testindexes.SASI(data, "val_sasi", args[1])
		ts.Check(err)
		names = append(names, n)
	}
	toc := strings.Replace(data, "Data.db", "TOC.txt", 1)
	b, err := os.ReadFile(toc)
	ts.Check(err)
	for _, n := range names {
		b = append(b, n+"\n"...)
	}
	ts.Check(os.WriteFile(toc, b, 0o644))
}

// upgradecrash N DIR upgrades DIR as sstabletool upgrade does, stopping
// before its N-th change of the disk as a kill there would.
func cmdUpgradeCrash(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: upgradecrash N DIR")
	}
	n, err := strconv.ParseInt(args[0], 10, 64)
	ts.Check(err)
	p, err := upgrade.NewPlan([]string{ts.MkAbs(args[1])}, format.MustVersion("oa"))
	ts.Check(err)
	efs := errorfs.New(vfs.Default).CrashAt(n, errorfs.Changes)
	if _, err := upgrade.RunOn(efs, p, upgrade.Options{Jobs: 1, Force: true}); !efs.Crashed() {
		ts.Fatalf("upgrade ran past change %d: %v", n, err)
	}
}

// mklog DIR NAME RECORD... writes the transaction log NAME into DIR as
// Cassandra writes one: each RECORD is ADD:<prefix> (an sstable the
// transaction writes: its file count as on disk), REMOVE:<prefix> (one it
// replaces: the newest modification time and count of its files),
// COMMIT or ABORT, with the directory's canonical path and checksums.
func cmdMklog(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: mklog DIR NAME RECORD...")
	}
	dir, err := filepath.EvalSymlinks(ts.MkAbs(args[0]))
	ts.Check(err)
	ents, err := os.ReadDir(dir)
	ts.Check(err)
	var b strings.Builder
	for _, r := range args[2:] {
		typ, prefix, _ := strings.Cut(r, ":")
		var newest int64
		n := 0
		for _, e := range ents {
			if prefix != "" && strings.HasPrefix(e.Name(), prefix) {
				fi, err := e.Info()
				ts.Check(err)
				newest = max(newest, txnlog.JavaModTime(fi))
				n++
			}
		}
		t := map[string]txnlog.Type{"ADD": txnlog.Add, "REMOVE": txnlog.Remove, "COMMIT": txnlog.Commit, "ABORT": txnlog.Abort}[typ]
		if t == txnlog.Unknown {
			ts.Fatalf("mklog: record %q: want ADD:<prefix>, REMOVE:<prefix>, COMMIT or ABORT", r)
		}
		path := ""
		if prefix != "" {
			path = filepath.Join(dir, prefix)
		}
		b.WriteString(txnlog.NewRecord(t, path, newest, n).Raw + "\n")
	}
	ts.Check(os.WriteFile(filepath.Join(dir, args[1]), []byte(b.String()), 0o644))
}

// systemschema DATA CQLFILE writes, as a node does, the system_schema of
// DATA for the tables CQLFILE creates (testtables.SystemSchema, 5.0's
// layout), each table's id that of its directory DATA/<keyspace>/<table>-<id>.
func cmdSystemSchema(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: systemschema DATA CQLFILE")
	}
	data := ts.MkAbs(args[0])
	src, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	sch, err := cqltype.ParseSchema(string(src))
	ts.Check(err)
	for _, t := range sch.Tables {
		dirs, err := format.TableDirsIn(data, t.Keyspace, t.Table)
		ts.Check(err)
		if len(dirs) != 1 || !dirs[0].HasID() {
			ts.Fatalf("systemschema: %s.%s: want one directory %s/%s/%s-<id>, found %v", t.Keyspace, t.Table, data, t.Keyspace, t.Table, dirs)
		}
		id := dirs[0].ID
		t.ID = id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:]
	}
	ts.Check(testtables.SystemSchema(data, sch, testtables.SystemSchemaOptions{Layout: "5.0", Version: format.MustVersion("oa"), Timestamp: 1_700_000_000_000_000}))
}

// Exit codes are part of the interface: 0 clean, 1 problems found, 2 bad
// input or usage.
func TestExitCodes(t *testing.T) {
	root := fixtures.Dir(t)
	good := filepath.Join(root, "cassandra", "oa", "legacy_oa_simple", "oa-1-big-Data.db")
	dir := t.TempDir()
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Statistics.db", "CompressionInfo.db", "Index.db", "Summary.db", "Filter.db", "TOC.txt", "Digest.crc32"} {
		c, err := os.ReadFile(filepath.Join(filepath.Dir(good), "oa-1-big-"+name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "oa-1-big-"+name), c, 0o644)
	}
	b[len(b)/2] ^= 0xFF
	bad := filepath.Join(dir, "oa-1-big-Data.db")
	os.WriteFile(bad, b, 0o644)

	saved := stdout
	defer func() { stdout = saved }()
	stdout = &discard{}
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"verify", good}, exitOK},
		{[]string{"verify", bad}, exitProblem},
		{[]string{"dump", bad}, exitBadData},
		{[]string{"dump", filepath.Join(dir, "missing-1-big-Data.db")}, exitBadData},
		{[]string{"partitions", "--sort", "nope", good}, exitBadData},
		{[]string{"metadata", good}, exitOK},
	}
	for _, c := range cases {
		if got := run(append([]string{"sstabletool"}, c.args...)); got != c.want {
			t.Errorf("sstabletool %v: exit %d, want %d", c.args, got, c.want)
		}
	}
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }

// mkdropnode DIR writes a node's data directory whose table ks.t has
// cells from before and after its columns' drop (testtables.DroppedColumnsNode).
func cmdMkdropnode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: mkdropnode DIR")
	}
	ts.Check(testtables.DroppedColumnsNode(ts.MkAbs(args[0])))
}

// mknode DIR SCHEMA.cql LAYOUT VERSION writes the system_schema a node of
// Cassandra LAYOUT (3.11, 4.0, 4.1, 5.0) would keep for the tables and
// types of a CQL file (WITH ID = ... gives a table its id), in sstable
// version VERSION, with the project's writer (testtables.SystemSchema).
func cmdMknode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 {
		ts.Fatalf("usage: mknode DIR SCHEMA.cql LAYOUT VERSION")
	}
	src, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	sch, err := cqltype.ParseSchema(string(src))
	ts.Check(err)
	v, err := format.ParseVersion(args[3])
	ts.Check(err)
	ts.Check(testtables.SystemSchema(ts.MkAbs(args[0]), sch, testtables.SystemSchemaOptions{Layout: args[2], Version: v, Timestamp: 1_700_000_000_000_000}))
}
