package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/internal/docs"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// examplePages are the pages whose examples run where README's do, in this
// order (later examples use what earlier ones wrote): in the fixtures'
// cassandra directory, with /tmp and /var/lib/cassandra moved into a
// temporary directory. Other pages show runs in directories of their own
// (docs/offline-tools.md, docs/write.md, docs/indexes.md...).
var examplePages = []string{
	"README.md",
	"docs/inspect.md",
	"docs/convert.md",
	"docs/upgrade.md",
	"docs/scrub.md",
	"docs/merge.md",
}

// TestDocExamples runs every "$ sstabletool ..." line of the code blocks of
// examplePages as written and checks its exit code: 0, or the one an
// "exit N" line after it shows. When the command's output is pasted whole
// (no pipe, no redirection; "; echo exit $?" aside) it must be what the
// command prints now: stdout, with stderr before or after it when it printed
// any, each line's trailing spaces and the temporary directory left out.
// /tmp/ is moved into a temporary directory, and legacy_tables.cql is the
// DESCRIBE KEYSPACE file of format/cqltype/testdata.
func TestDocExamples(t *testing.T) {
	schemaFile, err := filepath.Abs("../../format/cqltype/testdata/describe_legacy_tables.cql")
	if err != nil {
		t.Fatal(err)
	}
	var examples []docs.Example
	for _, page := range examplePages {
		ex, err := docs.Examples(filepath.Join("..", "..", filepath.FromSlash(page)), "sstabletool")
		if err != nil {
			t.Fatal(err)
		}
		if len(ex) == 0 {
			t.Errorf("%s has no example", page)
		}
		examples = append(examples, ex...)
	}
	tmp := t.TempDir()
	// The upgrade examples run on a node's data directory: an nc table
	// under /var/lib/cassandra/data, moved into the temporary directory.
	node := filepath.Join(tmp, "var", "lib", "cassandra")
	copyInto(t, fixtures.Table(t, "nc", "legacy_nc_clust"), filepath.Join(node, "data", "shop", "orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2"))
	copyInto(t, fixtures.Table(t, "nb", "legacy_nb_simple"), filepath.Join(node, "data", "shop", "customers-5b5e3f70c67c11eeb4a4d93dc8a1f6a2"))
	// The scrub examples: /tmp/orders is legacy_nc_clust without its
	// index, summary, filter and TOC; /tmp/gen a generated table with one
	// byte of Data.db flipped.
	orders := filepath.Join(tmp, "tmp", "orders")
	copyInto(t, fixtures.Table(t, "nc", "legacy_nc_clust"), orders)
	for _, c := range []string{"Index.db", "Summary.db", "Filter.db", "TOC.txt"} {
		if err := os.Remove(filepath.Join(orders, "nc-1-big-"+c)); err != nil {
			t.Fatal(err)
		}
	}
	gen := filepath.Join(tmp, "tmp", "gen")
	if code := run([]string{"sstabletool", "generate", "--out", gen, "--profile", "small-partitions", "--partitions", "2000", "--chunk-length", "4", "--seed", "3"}); code != exitOK {
		t.Fatalf("generate for the scrub example: exit %d", code)
	}
	data, err := os.ReadFile(filepath.Join(gen, "oa-1-big-Data.db"))
	if err != nil {
		t.Fatal(err)
	}
	data[19788] ^= 0xff
	if err := os.WriteFile(filepath.Join(gen, "oa-1-big-Data.db"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(fixtures.Dir(t), "cassandra"))
	t.Setenv("CI", "1")
	savedOut, savedErr := stdout, stderr
	defer func() { stdout, stderr = savedOut, savedErr }()

	compared := 0
	for _, ex := range examples {
		where := strings.TrimPrefix(filepath.ToSlash(ex.Page), "../../")
		words := shellWords(ex.Command)
		for k, w := range words {
			if strings.HasPrefix(w, "/tmp/") {
				w = filepath.Join(tmp, w)
			}
			if w == "legacy_tables.cql" {
				w = schemaFile
			}
			w = strings.ReplaceAll(w, "/var/lib/cassandra", node)
			words[k] = w
		}
		var out, errOut bytes.Buffer
		stdout, stderr = &out, &errOut
		code := run(words)
		stdout, stderr = savedOut, savedErr
		if code != ex.Exit {
			t.Errorf("%s:%d: %s\nexit %d, want %d\nstderr: %s", where, ex.Line, ex.Command, code, ex.Exit, errOut.String())
			continue
		}
		pasted, whole := pastedOutput(ex)
		if !whole {
			continue
		}
		compared++
		outLines, errLines := printedLines(out.String(), tmp), printedLines(errOut.String(), tmp)
		if samePrinted(pasted, outLines) || len(errLines) > 0 &&
			(samePrinted(pasted, append(append([]string{}, errLines...), outLines...)) || samePrinted(pasted, append(append([]string{}, outLines...), errLines...))) {
			continue
		}
		t.Errorf("%s:%d: %s\nprints what the page does not show (paste it again); -pasted +printed:\n%s\nstderr: %s",
			where, ex.Line, ex.Command, cmp.Diff(pasted, outLines), errOut.String())
	}
	if len(examples) < 35 || compared < 25 {
		t.Errorf("ran %d examples and compared the output of %d; the pages hold more", len(examples), compared)
	}
}

// pastedOutput is an example's output as the page shows it, each line
// without trailing spaces, and whether the page shows all of it: the command
// is not piped or redirected (a trailing `; echo "exit $?"` aside, whose
// line is dropped).
func pastedOutput(ex docs.Example) ([]string, bool) {
	lines := ex.Output
	cmd := ex.Command
	if rest, ok := strings.CutSuffix(cmd, `; echo "exit $?"`); ok {
		cmd = rest
		if n := len(lines); n > 0 && strings.HasPrefix(lines[n-1], "exit ") {
			lines = lines[:n-1]
		}
	}
	// What sh would take for a pipe, a redirection, another command or a
	// comment, outside quotes.
	var quote rune
	for _, c := range cmd {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case strings.ContainsRune("|><;&#", c):
			return nil, false
		}
	}
	// A blank line closing the output is the page's, not the command's.
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return trimmed(lines), true
}

// printedLines is what a command printed, as lines, with the temporary
// directory the examples' /tmp and /var/lib/cassandra moved into left out.
func printedLines(s, tmp string) []string {
	s = strings.TrimRight(strings.ReplaceAll(s, tmp, ""), "\n")
	if s == "" {
		return nil
	}
	return trimmed(strings.Split(s, "\n"))
}

// samePrinted says whether a command printed the lines pasted, in any
// order: the commands that work on several sstables at once (upgrade's
// --jobs) print each as it finishes.
func samePrinted(pasted, printed []string) bool {
	if len(pasted) != len(printed) {
		return false
	}
	a, b := slices.Clone(pasted), slices.Clone(printed)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func trimmed(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, " \t")
	}
	return out
}

// TestREADMEHasEveryCommand: every command --help lists has a row of
// README's table ("`sstabletool NAME" in a row that links to its docs
// page), so that a new command gets its question and its page.
func TestREADMEHasEveryCommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, "| ") && strings.Contains(l, "](") {
			rows = append(rows, l)
		}
	}
	for _, c := range commands() {
		if c.Hidden || c.Name == "help" {
			continue
		}
		found := false
		for _, r := range rows {
			found = found || strings.Contains(r, "`sstabletool "+c.Name+" ") || strings.Contains(r, "`sstabletool "+c.Name+"`")
		}
		if !found {
			t.Errorf("README's table has no row with `sstabletool %s ...` and a link to its docs page", c.Name)
		}
	}
}
