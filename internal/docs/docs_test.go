package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLinksResolve checks every relative link of README.md and docs/*.md:
// the file exists and a #fragment is a heading of it.
func TestLinksResolve(t *testing.T) {
	pages, err := Pages("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Fatalf("found only %d pages: %v", len(pages), pages)
	}
	broken, err := Broken(pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// The anchors of headings GitHub renders (checked by hand on github.com).
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"A tour (pasted from a real run)":                         "a-tour-pasted-from-a-real-run",
		"Splitting and filtering sstables: split, filter":         "splitting-and-filtering-sstables-split-filter",
		"--merge: a table's merged view, one file per table":      "--merge-a-tables-merged-view-one-file-per-table",
		"format/cqltype — CQL types: parse, size, compare, print": "formatcqltype--cql-types-parse-size-compare-print",
		"Exit codes":        "exit-codes",
		"snake_case Names":  "snake_case-names",
		"Déjà vu, 5.0":      "déjà-vu-50",
		"  padded heading ": "padded-heading",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestBroken runs the check on pages written for it: each kind of broken
// link is found, and nothing else.
func TestBroken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	other := write("docs/other.md", "# Other page\n\n## `merge --now`: as of a time\n\n## Repeated\n\n## Repeated\n\n<a id=\"by-hand\"></a>\n")
	write("docs/pic.png", "png")
	readme := write("README.md", strings.Join([]string{
		"# Top",
		"",
		"## Exit codes",
		"",
		"[ok](docs/other.md) [ok](docs/other.md#merge---now-as-of-a-time) [ok](#exit-codes) [ok](docs/other.md#repeated-1)",
		"[ok](docs/other.md#by-hand) ![ok](docs/pic.png) [ok](docs/) [web](https://example.com/x.md#nothing) <https://example.com>",
		"[missing file](docs/gone.md) [missing heading](docs/other.md#nope) [missing here](#nowhere) [third repeat](docs/other.md#repeated-2)",
		"[fragment into a picture](docs/pic.png#x)",
		"",
		"| question | command | page |",
		"| --- | --- | --- |",
		"| in a table | `x` | [broken in a table](docs/table.md) |",
		"",
		"Not links: `[code](nowhere.md)` and",
		"",
		"```",
		"[in a block](nowhere.md)",
		"```",
	}, "\n"))
	got, err := Broken([]string{readme, other})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = strings.ReplaceAll(got[i], dir+string(filepath.Separator), "")
	}
	want := []string{
		"README.md: docs/gone.md: no such file",
		"README.md: docs/other.md#nope: docs/other.md has no heading #nope",
		"README.md: #nowhere: README.md has no heading #nowhere",
		"README.md: docs/other.md#repeated-2: docs/other.md has no heading #repeated-2",
		"README.md: docs/pic.png#x: a #fragment into a file that is not Markdown",
		"README.md: docs/table.md: no such file",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("broken links (-want +got):\n%s", diff)
	}
}

func TestExamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.md")
	text := strings.Join([]string{
		"$ sstabletool outside a block",
		"```",
		"$ sstabletool verify x; echo \"exit $?\"",
		"FAIL x",
		"exit 1",
		"$ cmp a b && echo identical",
		"identical",
		"$ sstabletool dump y",
		"[ ]",
		"```",
		"```sh",
		"$ sstabletool",
		"```",
	}, "\n")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Examples(path, "sstabletool")
	if err != nil {
		t.Fatal(err)
	}
	want := []Example{
		{Page: path, Line: 3, Command: `sstabletool verify x; echo "exit $?"`, Output: []string{"FAIL x", "exit 1"}, Exit: 1},
		{Page: path, Line: 8, Command: "sstabletool dump y", Output: []string{"[ ]"}},
		{Page: path, Line: 12, Command: "sstabletool"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("examples (-want +got):\n%s", diff)
	}
}

// TestLibraryExample holds docs/library.md to the Example it shows: its Go
// block is the body of format/sstable's Example (from sstable.Open on), its
// output block the Example's "// Output:" lines, which go test checks.
func TestLibraryExample(t *testing.T) {
	page, err := os.ReadFile("../../docs/library.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../format/sstable/example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, goBlock, ok := strings.Cut(string(page), "```go\n")
	if !ok {
		t.Fatal("docs/library.md has no Go block")
	}
	goBlock, rest, _ := strings.Cut(goBlock, "```\n")
	_, outBlock, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("docs/library.md has no output block after its Go block")
	}
	outBlock, _, _ = strings.Cut(outBlock, "```\n")

	_, body, ok := strings.Cut(string(src), "\nfunc Example() {\n")
	if !ok {
		t.Fatal("format/sstable/example_test.go has no Example")
	}
	body, _, _ = strings.Cut(body, "\n}\n")
	code, output, ok := strings.Cut(body, "\t// Output:\n")
	if !ok {
		t.Fatal("the Example has no // Output:")
	}
	// The Go block: the Example's lines from sstable.Open, one tab less,
	// with the error check of the walk left out.
	start := strings.Index(code, "\ts, err := sstable.Open(")
	if start < 0 {
		t.Fatal("the Example does not open an sstable with sstable.Open")
	}
	var want []string
	for _, l := range strings.Split(strings.TrimRight(code[start:], "\n"), "\n") {
		want = append(want, strings.TrimPrefix(l, "\t"))
	}
	for len(want) > 0 && want[len(want)-1] != "})" {
		want = want[:len(want)-1]
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimRight(goBlock, "\n"), "\n")); diff != "" {
		t.Errorf("docs/library.md's Go block is not format/sstable's Example (-example +page):\n%s", diff)
	}
	var wantOut []string
	for _, l := range strings.Split(strings.TrimRight(output, "\n"), "\n") {
		wantOut = append(wantOut, strings.TrimPrefix(strings.TrimPrefix(l, "\t// "), "\t//"))
	}
	if diff := cmp.Diff(wantOut, strings.Split(strings.TrimRight(outBlock, "\n"), "\n")); diff != "" {
		t.Errorf("docs/library.md's output is not the Example's (-example +page):\n%s", diff)
	}
}
