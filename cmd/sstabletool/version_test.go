package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format"
)

// TestVersionOfACheckoutBuild builds the command from this git checkout as
// an operator would (go build) and runs it: --version names the commit
// checked out and says whether the tree had changes; version --json says
// the same for a bug report. It skips outside a git checkout, and in a
// git worktree, where the go command stamps no revision (.git is a file
// there, and the go command looks for a .git directory).
func TestVersionOfACheckoutBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", args...).Output()
		return strings.TrimSpace(string(out)), err
	}
	root, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	if st, err := os.Stat(filepath.Join(root, ".git")); err != nil || !st.IsDir() {
		t.Skipf("%s/.git is not a directory (a git worktree?): the go command stamps no revision there", root)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command in PATH: %v", err)
	}
	head, err := git("rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "sstabletool")
	// -buildvcs=true: GOFLAGS may say false (it does on some build machines).
	if out, err := exec.Command(goCmd, "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	status, err := git("status", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	modified := status != ""

	text, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "\nrevision: "+head+" (") {
		t.Errorf("--version does not name the revision %s:\n%s", head, text)
	}
	if got := strings.Contains(string(text), "modified: the tree had uncommitted changes"); got != modified {
		t.Errorf("--version says modified %v; git status says %v (%q):\n%s", got, modified, status, text)
	}
	v, err := exec.Command(bin, "-v").Output()
	if err != nil || !bytes.Equal(v, text) {
		t.Errorf("-v printed %q (%v), --version %q", v, err, text)
	}

	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var b buildInfo
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out)
	}
	if b.Revision != head || b.Time == "" || b.Modified == nil || *b.Modified != modified {
		t.Errorf("version --json: revision %q time %q modified %v; want %s, a time, %v", b.Revision, b.Time, b.Modified, head, modified)
	}
	// Go 1.24 and later make the module version a pseudo-version of the commit.
	if !strings.Contains(b.Version, head[:12]) {
		t.Errorf("version --json: version %q does not name %s", b.Version, head[:12])
	}
}

// TestVersionJSON: the versions version --json says the build reads are
// format.Released's, by format, and the toolchain is the running one.
func TestVersionJSON(t *testing.T) {
	var out bytes.Buffer
	saved := stdout
	stdout = &out
	code := run([]string{"sstabletool", "version", "--json"})
	stdout = saved
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var b buildInfo
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := map[string][]string{}
	for _, v := range format.Released() {
		want[string(v.Format)] = append(want[string(v.Format)], v.Name)
	}
	got := map[string][]string{}
	for _, f := range b.Reads {
		got[f.Format] = f.Versions
	}
	if diff := cmp.Diff(want, got); diff != "" || len(b.Reads) != 2 {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
	if b.Go != runtime.Version() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH || b.Version == "" {
		t.Errorf("go %q platform %q version %q", b.Go, b.Platform, b.Version)
	}
}
