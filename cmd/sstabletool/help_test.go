package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/testtables"
	"github.com/sstabletool/sstabletool/tui"
)

// helpExamples returns the example command lines of a command's --help:
// the lines after "Examples:" in its description.
func helpExamples(desc string) []string {
	_, ex, ok := strings.Cut(desc, "Examples:\n")
	if !ok {
		return nil
	}
	var out []string
	for _, l := range strings.Split(ex, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// shellWords splits a shell command line into words the way sh would for
// these examples: quotes group, and an unquoted |, > or # ends the command
// (what follows is another program, a redirection or a comment).
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case (c == '|' || c == '>' || c == '#' || c == ';') && !inWord:
			return words
		case c == ';': // "path; echo ..." ends the command too
			return append(words, cur.String())
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// copyInto copies the files of a fixture sstable directory into dst.
func copyInto(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const shopSchema = `CREATE KEYSPACE shop WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3'}  AND durable_writes = true;

CREATE TABLE shop.customers (
    pk text PRIMARY KEY,
    val text
) WITH comment = '';

CREATE TABLE shop.orders (
    pk text,
    ck text,
    val text,
    PRIMARY KEY (pk, ck)
) WITH CLUSTERING ORDER BY (ck ASC)
    AND comment = '';
`

// ordersStress is a cassandra-stress user profile of shop.orders.
const ordersStress = `keyspace: shop
table: orders
table_definition: |
  CREATE TABLE orders (pk text, ck text, val text, PRIMARY KEY (pk, ck))
columnspec:
  - name: pk
    size: uniform(8..16)
  - name: ck
    cluster: uniform(1..50)
  - name: val
    size: gaussian(20..200)
insert:
  partitions: uniform(1..4)
  select: uniform(1..10)/10
  batchtype: UNLOGGED
queries:
  last:
    cql: select * from orders where pk = ? limit 1
`

// TestHelpExamples runs every example of every command's --help as
// written, in a node's data directory made of real fixture sstables:
// /var/lib/cassandra/data/shop/orders-<id>/ holds an nc table (the
// working directory, so nc-1-big-Data.db names it) and customers-<id>/ an
// oa one; /var/lib/cassandra and /tmp/ are moved into a temporary
// directory. Each must exit 0. Only what follows a pipe, a redirection or
// a comment is left out, and lines of other programs (cqlsh).
func TestHelpExamples(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "var", "lib", "cassandra", "data")
	orders := filepath.Join(data, "shop", "orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2")
	copyInto(t, fixtures.Table(t, "nc", "legacy_nc_clust"), orders)
	copyInto(t, fixtures.Table(t, "oa", "legacy_oa_simple"), filepath.Join(data, "shop", "customers-5b5e3f70c67c11eeb4a4d93dc8a1f6a2"))
	copyInto(t, fixtures.Table(t, "nc", "legacy_nc_clust"), filepath.Join(root, "tmp", "copy-of-orders"))
	if err := os.WriteFile(filepath.Join(orders, "shop.cql"), []byte(shopSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	// The node's own schema, as its system_schema holds it.
	sch, err := cqltype.ParseSchema(shopSchema)
	if err != nil {
		t.Fatal(err)
	}
	sch.Tables[0].ID, sch.Tables[1].ID = "5b5e3f70-c67c-11ee-b4a4-d93dc8a1f6a2", "4a4e3f70-c67c-11ee-b4a4-d93dc8a1f6a2"
	if err := testtables.SystemSchema(data, sch, testtables.SystemSchemaOptions{Layout: "5.0", Version: format.MustVersion("oa"), Timestamp: 1_700_000_000_000_000}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orders, "orders-stress.yaml"), []byte(ordersStress), 0o644); err != nil {
		t.Fatal(err)
	}
	// What `find ... -name '*Data.db' > /tmp/old-sstables.txt` wrote (repaired-set -f).
	if err := os.WriteFile(filepath.Join(root, "tmp", "old-sstables.txt"), []byte(filepath.Join(orders, "nc-1-big-Data.db")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(orders)
	t.Setenv("CI", "1")
	writeDumpOf(t, "rows.json", "dump", "-t", "nc-1-big-Data.db") // write's examples read them
	writeDumpOf(t, "rows.jsonl", "dump", "-t", "-l", "nc-1-big-Data.db")

	savedOut, savedErr, savedBrowse := stdout, stderr, browse
	defer func() { stdout, stderr, browse = savedOut, savedErr, savedBrowse }()
	var browsed []string
	browse = func(paths []string, o tui.Options) ([]tui.Unreadable, error) {
		browsed = paths
		return o.Unreadable, nil
	}

	ran := 0
	// upgrade rewrites the data directory in place: its examples run last,
	// after every other command has read the nc table as it was.
	cmds := newApp().Commands
	slices.SortStableFunc(cmds, func(a, b *cli.Command) int {
		return map[bool]int{true: 1}[a.Name == "upgrade"] - map[bool]int{true: 1}[b.Name == "upgrade"]
	})
	for _, cmd := range cmds {
		examples := helpExamples(cmd.Description)
		if len(examples) == 0 {
			t.Errorf("sstabletool %s --help has no examples", cmd.Name)
		}
		for _, ex := range examples {
			words := shellWords(ex)
			env := map[string]string{}
			for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
				k, v, _ := strings.Cut(words[0], "=")
				env[k] = v
				words = words[1:]
			}
			if len(words) == 0 || words[0] != "sstabletool" {
				continue
			}
			// generate may make the input of the examples after it (a
			// history to try a command on); any other command is out of place.
			setup := len(words) >= 2 && words[1] == "generate" && cmd.Name != "generate"
			if len(words) < 2 || (words[1] != cmd.Name && !setup) {
				t.Errorf("%s --help: example %q runs another command", cmd.Name, ex)
				continue
			}
			for i, w := range words {
				if strings.HasPrefix(w, "/tmp/") {
					w = filepath.Join(root, w)
				}
				words[i] = strings.ReplaceAll(w, "/var/lib/cassandra", filepath.Join(root, "var", "lib", "cassandra"))
			}
			for k, v := range env {
				t.Setenv(k, v)
			}
			var out, errOut bytes.Buffer
			stdout, stderr = &out, &errOut
			browsed = nil
			code := run(words)
			stdout, stderr = savedOut, savedErr
			ran++
			// An example whose comment says "exit 1" shows a finding.
			want := exitOK
			if _, comment, ok := strings.Cut(ex, "#"); ok && strings.Contains(comment, "exit 1") {
				want = exitProblem
			}
			if code != want {
				t.Errorf("%s\nexit %d\nstderr: %s", ex, code, errOut.String())
				continue
			}
			if setup {
				continue
			}
			if cmd.Name == "browse" {
				if len(browsed) == 0 {
					t.Errorf("%s: the browser got no sstable", ex)
				}
			} else if out.Len() == 0 {
				t.Errorf("%s: printed nothing", ex)
			}
		}
	}
	if ran < 25 {
		t.Errorf("ran %d examples; the help texts hold more", ran)
	}
}

// writeDumpOf writes what a command prints to file.
func writeDumpOf(t *testing.T, file string, args ...string) {
	t.Helper()
	saved := stdout
	var out bytes.Buffer
	stdout = &out
	code := run(append([]string{"sstabletool"}, args...))
	stdout = saved
	if code != exitOK {
		t.Fatalf("sstabletool %v: exit %d", args, code)
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
