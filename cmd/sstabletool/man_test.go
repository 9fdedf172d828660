package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// manDir is the repository's copy of the pages.
const manDir = "../../docs/man"

// regenerate is what TestManPagesCurrent tells to run.
const regenerate = "regenerate them from the repository's root with\n\tgo run ./cmd/sstabletool man --out docs/man\n(or go generate ./cmd/sstabletool) and commit docs/man"

// TestManPagesCurrent fails when docs/man is not what "sstabletool man"
// makes from the commands' definitions: a flag, a command or a help text
// changed without the pages.
func TestManPagesCurrent(t *testing.T) {
	pages, err := manPages(newApp())
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(manDir)
	if err != nil {
		t.Fatalf("docs/man: %v; %s", err, regenerate)
	}
	var stale []string
	for _, e := range ents {
		if _, ok := pages[e.Name()]; !ok {
			stale = append(stale, e.Name()+" (no such command)")
		}
	}
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(manDir, name))
		switch {
		case err != nil:
			stale = append(stale, name+" (missing)")
		case !bytes.Equal(got, want):
			stale = append(stale, name+" (differs)")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Errorf("docs/man is stale: %s;\n%s", strings.Join(stale, ", "), regenerate)
	}
}

// TestManPagesRender renders every page of docs/man with groff (as man
// does) and mandoc where they are installed: no warning, and the page
// holds what --help holds: the usage, every flag and every example.
func TestManPagesRender(t *testing.T) {
	groff, gerr := exec.LookPath("groff")
	mandoc, merr := exec.LookPath("mandoc")
	if gerr != nil && merr != nil {
		t.Skip("neither groff nor mandoc is installed")
	}
	app := newApp()
	for _, cmd := range app.Commands {
		if cmd.Hidden {
			continue
		}
		page := filepath.Join(manDir, "sstabletool-"+cmd.Name+".1")
		if gerr == nil {
			// -k: the pages are UTF-8 (preconv, as man runs it); -ww: every warning.
			var warnings bytes.Buffer
			g := exec.Command(groff, "-k", "-man", "-Tutf8", "-ww", "-rLL=200n", page)
			g.Stderr = &warnings
			out, err := g.Output()
			if err != nil || warnings.Len() > 0 {
				t.Errorf("groff %s: %v\n%s", page, err, firstLines(warnings.Bytes()))
				continue
			}
			text := strings.Join(strings.Fields(stripOverstrike(string(out))), " ")
			want := []string{"NAME", "sstabletool-" + cmd.Name + " - " + cmd.Usage, "SYNOPSIS", "sstabletool " + cmd.Name + " [OPTIONS]", "DESCRIPTION", "OPTIONS", "EXAMPLES"}
			for _, f := range cmd.VisibleFlags() {
				want = append(want, "--"+f.Names()[0])
			}
			for _, ex := range helpExamples(cmd.Description) {
				want = append(want, strings.Join(strings.Fields(ex), " "))
			}
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("man %s: no %q in\n%s", page, w, text)
				}
			}
		}
		if merr == nil {
			out, _ := exec.Command(mandoc, "-Tlint", "-Wwarning", page).CombinedOutput()
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				// The pages carry no date, so that they are the same
				// whenever they are made.
				if l != "" && !strings.Contains(l, "missing date") {
					t.Errorf("mandoc -Tlint %s: %s", page, l)
				}
			}
		}
	}
}

// stripOverstrike removes the backspace overstrikes of groff's bold and
// underlined text (grotty's old style), if any, and its SGR escapes.
func stripOverstrike(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i := 0; i < len(r); i++ {
		switch {
		case i+1 < len(r) && r[i+1] == '\b':
			i++ // the overstruck character is the next one
		case r[i] == '\x1b':
			for i < len(r) && r[i] != 'm' {
				i++
			}
		default:
			b.WriteRune(r[i])
		}
	}
	// groff's typographic quotes and hyphens, as the examples write them.
	return strings.NewReplacer("‐", "-", "−", "-", "’", "'", "‘", "'", "“", `"`, "”", `"`).Replace(b.String())
}

func firstLines(b []byte) string {
	lines := strings.SplitN(string(b), "\n", 6)
	return strings.Join(lines[:min(5, len(lines))], "\n")
}

// TestManMarkdown: plain text of --help reads as itself in a page.
func TestManMarkdown(t *testing.T) {
	md, ex := manDescription("-k's keys are found <by> the index; a*b, a_b_c, [n] and `x`.\n" +
		"1. is not a list\n\n" +
		"  older timestamp    another sstable wrote it later\n" +
		"  tie: tombstone wins\n\n" +
		"Examples:\n  sstabletool dump x.db -k 1      # one partition\n  sstabletool dump x.db")
	wantMD := "\\-k's keys are found \\<by\\> the index; a\\*b, a\\_b\\_c, \\[n\\] and \\`x\\`.\n" +
		"1\\. is not a list\n\n" +
		"```\n  older timestamp    another sstable wrote it later\n  tie: tombstone wins\n```\n"
	if md != wantMD {
		t.Errorf("markdown:\n%s\nwant:\n%s", md, wantMD)
	}
	if want := "sstabletool dump x.db -k 1      # one partition\nsstabletool dump x.db\n"; ex != want {
		t.Errorf("examples %q, want %q", ex, want)
	}
}

// TestManWritesPages: the man command writes every page and removes the
// page of a command that is gone.
func TestManWritesPages(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "sstabletool-frobnicate.1")
	other := filepath.Join(dir, "cassandra.1")
	for _, f := range []string{gone, other} {
		if err := os.WriteFile(f, []byte(".TH X 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	saved := stdout
	stdout = &out
	code := run([]string{"sstabletool", "man", "--out", dir})
	stdout = saved
	if code != exitOK || !strings.Contains(out.String(), "sstabletool-COMMAND.1 for each of") {
		t.Fatalf("man --out: exit %d, %s", code, out.String())
	}
	pages, err := manPages(newApp())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range pages {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the page of a command that is gone is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another program's page was removed: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(pages)+1 {
		t.Errorf("%d files in %s, want %d pages and cassandra.1", len(ents), dir, len(pages))
	}
}
