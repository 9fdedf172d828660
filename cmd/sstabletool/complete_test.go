package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

func completionWords(c completion) []string {
	var out []string
	for _, k := range c.cands {
		out = append(out, k.word)
	}
	return out
}

// TestCompleteCandidates holds the candidates of the app's own definitions
// for a command, a flag, a value of a fixed set and a path, wherever the
// flags stand (before or after the arguments, with = or apart, after --).
func TestCompleteCandidates(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"orders-4a4e3f70", "customers-5b5e3f70", ".snapshots"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"nc-1-big-Index.db", "nc-1-big-Data.db", "nc-2-big-Data.db", "notes.txt", "nc.cql", ".hidden"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	var versions []string
	for _, v := range format.Released() {
		versions = append(versions, v.Name)
	}
	// The path candidates of dir: directories, then Data.db, then other
	// components, then other files; no dot files.
	inDir := []string{"customers-5b5e3f70/", "orders-4a4e3f70/", "nc-1-big-Data.db", "nc-2-big-Data.db", "nc-1-big-Index.db", "nc.cql", "notes.txt"}
	tests := []struct {
		words []string
		want  []string
		files bool
	}{
		// Commands.
		{[]string{"pa"}, []string{"partitions"}, false},
		{[]string{"me"}, []string{"memsim", "metadata"}, false},
		{[]string{"__"}, nil, false}, // hidden
		{[]string{"--v"}, []string{"--version"}, false},
		// Flags, before or after the paths; one given already is not
		// offered again, unless it repeats.
		{[]string{"dump", "--ex"}, []string{"--exclude-key"}, false},
		{[]string{"dump", "nc-1-big-Data.db", "--ke"}, []string{"--key"}, false},
		{[]string{"dump", "-k", "1", "--ke"}, []string{"--key"}, false},
		{[]string{"convert", "--to", "oa", "--t"}, []string{"--table"}, false},
		{[]string{"convert", "--to=oa", "--t"}, []string{"--table"}, false},
		{[]string{"scrub", "--m"}, []string{"--mode"}, false},
		{[]string{"version", "-"}, []string{"--json", "--help", "-h"}, false},
		{[]string{"explain", "-"}, []string{"--key", "-k", "--now", "--purge", "--gc-grace", "--json", "--access", "--schema", "--schema-from", "--table", "--help", "-h"}, false},
		// Values of a fixed set: apart, with =, in a list, ignoring case.
		{[]string{"convert", "--to", ""}, versions, false},
		{[]string{"convert", "nc-1-big-Data.db", "--to", "n"}, []string{"na", "nb", "nc"}, false},
		{[]string{"convert", "--to=o"}, []string{"--to=oa"}, false},
		{[]string{"upgrade", "--to", ""}, versions[:len(versions)-1], false}, // big only
		{[]string{"scrub", "--mode", "v"}, []string{"validate"}, false},
		{[]string{"verify", "--access", ""}, []string{"mmap", "buffered"}, false},
		{[]string{"export", "--datasets", "cells,"}, []string{"cells,partitions", "cells,sstables"}, false},
		{[]string{"export", "--datasets=partitions,cells,s"}, []string{"--datasets=partitions,cells,sstables"}, false},
		{[]string{"metadata", "-t", "mi"}, []string{"MICROSECONDS", "MILLISECONDS", "MINUTES"}, false},
		{[]string{"partitions", "--sort", "t"}, []string{"tombstones", "token"}, false},
		{[]string{"memsim", "--jdk", ""}, []string{"11", "17"}, false},
		{[]string{"generate", "--compression", "Z"}, []string{"ZstdCompressor"}, false},
		{[]string{"convert", "--verify="}, []string{"--verify=true", "--verify=false"}, false},
		{[]string{"dump", "--key", ""}, nil, false}, // a key: nothing to offer
		// Paths: arguments, after --, and flags that take a file or a directory.
		{[]string{"dump", ""}, inDir, true},
		{[]string{"dump", "nc-"}, []string{"nc-1-big-Data.db", "nc-2-big-Data.db", "nc-1-big-Index.db"}, true},
		{[]string{"dump", "."}, []string{".snapshots/", ".hidden"}, true},
		{[]string{"dump", "--", "-"}, nil, true},
		{[]string{"dump", "--schema", "n"}, []string{"nc-1-big-Data.db", "nc-2-big-Data.db", "nc-1-big-Index.db", "nc.cql", "notes.txt"}, true},
		{[]string{"export", "--out", ""}, []string{"customers-5b5e3f70/", "orders-4a4e3f70/"}, true},
		{[]string{"export", "--out=o"}, []string{"--out=orders-4a4e3f70/"}, true},
		{[]string{"memsim", "--profile", "s"}, []string{"small-partitions"}, true},
		{[]string{"schema", "nc-1-big-Data.db", ""}, nil, false}, // schema takes one path
		{[]string{"memsim", ""}, nil, false},                     // memsim takes none
		{[]string{"query", ""}, nil, false},                      // the statement
		{[]string{"query", "SELECT * FROM shop.orders", "o"}, []string{"orders-4a4e3f70/"}, true},
		// The positional arguments of help and completion.
		{[]string{"help", "sc"}, []string{"schema", "scrub"}, false},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}, false},
		{[]string{"completion", "bash", ""}, nil, false},
	}
	for _, tc := range tests {
		got := complete(newApp(), tc.words)
		if diff := cmp.Diff(tc.want, completionWords(got)); diff != "" {
			t.Errorf("complete %q (-want +got):\n%s", tc.words, diff)
		}
		if got.files != tc.files && len(tc.want) > 0 {
			t.Errorf("complete %q: files = %v, want %v", tc.words, got.files, tc.files)
		}
	}
	// Every visible command, and only those, for an empty word.
	var want []string
	for _, c := range newApp().Commands {
		if !c.Hidden {
			want = append(want, c.Name)
		}
	}
	if diff := cmp.Diff(want, completionWords(complete(newApp(), []string{""}))); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

// TestCompleteDerivesFromDefinitions: a command defined later, as the
// others are (command() with a oneOf flag), completes with nothing added
// to the completion code, and so do the flags of every command: each
// value offered passes the flag's own check.
func TestCompleteDerivesFromDefinitions(t *testing.T) {
	app := newApp()
	app.Commands = append(app.Commands, command(&cli.Command{
		Name:  "frobnicate",
		Usage: "a command added after the completion was written",
		Flags: []cli.Flag{
			oneOf(&cli.StringFlag{Name: "strategy", Usage: "compaction strategy"}, "LeveledCompactionStrategy", "UnifiedCompactionStrategy"),
			&cli.StringFlag{Name: "out", Usage: "output `DIR`"},
		},
	}, oneSSTable))
	for _, tc := range []struct {
		words, want []string
	}{
		{[]string{"frob"}, []string{"frobnicate"}},
		{[]string{"frobnicate", "--st"}, []string{"--strategy"}},
		{[]string{"frobnicate", "x", "--strategy", "U"}, []string{"UnifiedCompactionStrategy"}},
	} {
		if diff := cmp.Diff(tc.want, completionWords(complete(app, tc.words))); diff != "" {
			t.Errorf("complete %q (-want +got):\n%s", tc.words, diff)
		}
	}
	// The flag refuses what it does not offer, through the same list.
	var errOut strings.Builder
	saved := stderr
	stderr = &errOut
	code := run([]string{"sstabletool", "partitions", "--sort", "width", "x"})
	stderr = saved
	if want := `partitions: --sort "width": expected size, rows, cells, tombstones, key or token`; code != exitBadData || !strings.Contains(errOut.String(), want) {
		t.Errorf("partitions --sort width: exit %d, %q; want 2, %q", code, errOut.String(), want)
	}

	checked := 0
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			ch, ok := f.(*choiceFlag)
			if !ok {
				continue
			}
			if len(ch.values) == 0 {
				t.Errorf("%s --%s: a choice flag with no values", cmd.Name, ch.Names()[0])
			}
			for _, v := range ch.values {
				checked++
				if err := ch.check(v); err != nil {
					t.Errorf("%s --%s offers %q, which it refuses: %v", cmd.Name, ch.Names()[0], v, err)
				}
			}
			if ch.list {
				if err := ch.check(strings.Join(ch.values, ",")); err != nil {
					t.Errorf("%s --%s refuses all its values at once: %v", cmd.Name, ch.Names()[0], err)
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("checked %d values of choice flags; the commands have more", checked)
	}
}

// TestCompleteRealSSTables completes paths in the fixtures' directories:
// an sstable's Data.db comes before its other components.
func TestCompleteRealSSTables(t *testing.T) {
	dir := fixtures.Table(t, "nc", "legacy_nc_clust")
	got := completionWords(complete(newApp(), []string{"dump", dir + "/nc-1-big-"}))
	if len(got) < 5 || got[0] != dir+"/nc-1-big-Data.db" {
		t.Fatalf("complete %s/nc-1-big-: %q", dir, got)
	}
	for _, w := range got[1:] {
		if _, comp, err := format.ParseDescriptor(w); err != nil || comp == format.ComponentData {
			t.Errorf("%s: %v %s", w, err, comp)
		}
	}
}

// The words printed by __complete, without the directive.
func runComplete(t *testing.T, args ...string) (lines []string, directive string) {
	t.Helper()
	out, err := exec.Command("sstabletool", append([]string{"__complete"}, args...)...).Output()
	if err != nil {
		t.Fatalf("sstabletool __complete %q: %v", args, err)
	}
	all := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	return all[:len(all)-1], all[len(all)-1]
}

// TestCompleteCommand runs __complete as the scripts do, through the
// binary: its flags are not sstabletool's, and its output is one
// candidate a line with descriptions, then the directive.
func TestCompleteCommand(t *testing.T) {
	lines, directive := runComplete(t, "scrub", "--mo")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "--mode\tskip (leave out") || directive != ":" {
		t.Errorf("__complete scrub --mo: %q %q", lines, directive)
	}
	lines, _ = runComplete(t, "dump", "--help", "--", "--j")
	if len(lines) != 0 {
		t.Errorf("__complete dump --help -- --j: %q (after --, a path)", lines)
	}
	dir := t.TempDir()
	lines, directive = runComplete(t, "verify", dir+"/")
	if len(lines) != 0 || directive != ":files" {
		t.Errorf("__complete verify %s/: %q %q", dir, lines, directive)
	}
}

// shellTest runs script in shell, with the sstabletool that
// testscript.Main puts in $PATH, and returns its output; it skips when
// the shell is not installed.
func shellTest(t *testing.T, shell string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Skipf("%s is not installed", shell)
	}
	cmd := exec.Command(shell, args...)
	cmd.Dir = t.TempDir()
	for _, d := range []string{"orders-4a4e3f70", "orders-archive"} {
		if err := os.Mkdir(filepath.Join(cmd.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", shell, args, err, out)
	}
	return string(out)
}

// TestCompletionScriptSyntax checks each script with its shell's parser.
func TestCompletionScriptSyntax(t *testing.T) {
	for _, s := range completionScripts {
		t.Run(s.shell, func(t *testing.T) {
			b, err := completionFiles.ReadFile(s.file)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), filepath.Base(s.file))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			shellTest(t, s.shell, "-n", path)
		})
	}
}

// TestCompletionBash sources the bash script and completes as readline
// would: COMP_WORDS cut at = (COMP_WORDBREAKS), the candidates replacing
// the text after it.
func TestCompletionBash(t *testing.T) {
	out := shellTest(t, "bash", "--norc", "-c", `
source <(sstabletool completion bash) || exit 1
complete -p sstabletool
t() { # t LINE WORD... : complete LINE, which bash cut into the WORDs
  COMP_LINE=$1 COMP_POINT=${#1}; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
  _sstabletool; echo "${COMPREPLY[*]}"
}
t 'sstabletool pa' sstabletool pa
t 'sstabletool scrub --mode ' sstabletool scrub --mode ''
t 'sstabletool convert x --to=n' sstabletool convert x --to = n
t 'sstabletool convert --to=' sstabletool convert --to =
t 'sstabletool export --datasets=cells,s' sstabletool export --datasets = cells,s
t 'sstabletool verify orders' sstabletool verify orders
t 'sstabletool upgrade --to d' sstabletool upgrade --to d
`)
	want := `complete -F _sstabletool sstabletool
partitions
skip abort validate
na nb nc
ma mb mc md me na nb nc oa da
cells,sstables
orders-4a4e3f70/ orders-archive/

`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("bash (-want +got):\n%s", diff)
	}
}

// TestCompletionZsh runs the zsh script's function with compadd replaced
// by a function that prints what it is given (compadd is a builtin of
// completion widgets only).
func TestCompletionZsh(t *testing.T) {
	out := shellTest(t, "zsh", "-f", "-c", `
compdef() { print -r -- "compdef $*" }
source <(sstabletool completion zsh) || exit 1
compadd() { print -r -- "${(j: :)@}" }
t() { words=("$@"); CURRENT=$#; PREFIX=${@[-1]}; _sstabletool }
t sstabletool scrub --mode ''
t sstabletool verify orders
t sstabletool dump --jsonl
`)
	want := `compdef _sstabletool sstabletool
-V sstabletool -l -d descs -- skip abort validate
-V sstabletool-dirs -S  -- orders-4a4e3f70/ orders-archive/
-V sstabletool -l -d descs -- --jsonl
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("zsh (-want +got):\n%s", diff)
	}
}

// TestCompletionFish completes with fish's own engine (complete -C).
func TestCompletionFish(t *testing.T) {
	out := shellTest(t, "fish", "--no-config", "-c", `
sstabletool completion fish | source; or exit 1
complete -C 'sstabletool scrub --mode '
complete -C 'sstabletool verify orders'
complete -C 'sstabletool export --datasets=cells,s'
complete -C 'sstabletool dump --jsonl'
`)
	want := "skip\nabort\nvalidate\norders-4a4e3f70/\norders-archive/\n--datasets=cells,sstables\n--jsonl\tone partition per line (JSON lines)\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("fish (-want +got):\n%s", diff)
	}
	if !slices.Contains(completionShells(), "fish") {
		t.Error("fish has no script")
	}
}
