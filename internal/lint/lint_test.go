package lint

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/sstabletool/sstabletool"

// A group is a set of packages of the module; its packages may import each
// other and the groups of uses, and whatever those may (the arrows are
// transitive). Every package is in exactly one group: a new package needs
// its line here, and a new feature is one line. Patterns are paths below
// the module, "x/..." meaning x and everything under it; a package takes
// the group of its longest matching pattern.
type group struct {
	name string
	pkgs []string
	uses []string
}

// groups are the arrows of docs/design.md ("Dependencies flow one way"),
// bottom to top.
var groups = []group{
	// Small helpers every layer may use: words and numbers, LZ4.
	{"helpers", []string{"internal/words", "internal/lz4fast"}, nil},
	// The format layer imports no feature.
	{"format layer", []string{"corrupt", "deletiontime", "reader", "format/...", "internal/format/..."}, []string{"helpers"}},
	// The one seam every write goes through.
	{"vfs", []string{"internal/vfs"}, nil},
	// Whether a node's files are in use (open or mapped, a commit log
	// newer than the sstables): every in-place writer checks it first.
	{"livecheck", []string{"internal/livecheck"}, []string{"format layer"}},

	// Read features: the format layer and below, nothing else.
	{"dump", []string{"internal/dump"}, []string{"format layer"}},
	{"inspect", []string{"internal/inspect"}, []string{"format layer"}},
	{"verify", []string{"verify"}, []string{"format layer"}},
	// expired: getFullyExpiredSSTables' answer and its blockers.
	{"expired", []string{"internal/expired"}, []string{"format layer"}},
	{"merge", []string{"merge/..."}, []string{"format layer"}},
	{"export", []string{"export/..."}, []string{"format layer", "inspect", "vfs"}},
	// query: a CQL SELECT (internal/cql, which imports nothing) run on a
	// merged table.
	{"cql", []string{"internal/cql"}, nil},
	{"query", []string{"internal/query"}, []string{"merge", "cql"}},
	// nodeschema: a node's system_schema tables, read with query.
	{"nodeschema", []string{"nodeschema"}, []string{"query"}},

	// Write features, in their fixed order: scrub -> upgrade -> convert
	// -> verify and writer; generate -> writer. Scrub rewrites in place
	// through upgrade's transaction log.
	{"writer", []string{"internal/writer"}, []string{"format layer", "vfs"}},
	{"convert", []string{"convert"}, []string{"verify", "writer", "merge"}},
	{"upgrade", []string{"internal/upgrade"}, []string{"convert", "livecheck"}},
	{"scrub", []string{"scrub/..."}, []string{"upgrade", "merge"}},
	// split and filter: an sstable's partitions into new sstables, in
	// place through upgrade's transaction log; keys named as inspect
	// prints them.
	{"split", []string{"internal/split"}, []string{"upgrade", "merge", "inspect"}},
	// The offline tools that change a node's files in place without
	// rewriting sstables: Statistics.db's level and repair fields
	// (repaired-set, level-reset, relevel), a table's files and the
	// cleanup of unfinished transactions (util).
	{"statsedit", []string{"internal/statsedit"}, []string{"format layer", "vfs"}},
	{"tablefiles", []string{"internal/tablefiles"}, []string{"format layer", "vfs"}},

	// Workloads and the memtable simulator: memview -> memsim -> workload
	// <- generate -> writer.
	{"workload", []string{"workload"}, []string{"format layer"}},
	{"memsim", []string{"memsim/..."}, []string{"workload"}},
	{"generate", []string{"internal/generate"}, []string{"workload", "writer"}},
	{"undump", []string{"internal/undump"}, []string{"dump", "writer", "merge", "verify", "vfs"}},

	// The terminal UI: tui -> convert (the savings column) and inspect.
	// Its styles and value texts are shared with memview.
	{"terminal styles", []string{"internal/tui/theme", "internal/tui/bytemap", "internal/tui/cellfmt"}, []string{"format layer"}},
	{"tui", []string{"tui", "internal/tui/..."}, []string{"terminal styles", "convert", "inspect"}},
	{"memview", []string{"internal/memview"}, []string{"memsim", "terminal styles"}},

	// The command: flags and output over every feature. Nothing imports
	// it (Go refuses to import a main package anyway).
	{"cmd", []string{"cmd/..."}, []string{"dump", "inspect", "verify", "merge", "query", "nodeschema", "export", "convert", "scrub", "upgrade", "split", "generate", "tui", "memview", "statsedit", "tablefiles", "livecheck", "undump", "expired"}},

	// Test support: no package but test support imports it (tests do).
	{"test support", []string{"internal/fixtures", "internal/fixturekeys", "internal/testtables", "internal/testindexes", "internal/realworld",
		"internal/benchbase/...", "internal/vfs/errorfs", "internal/lint", "internal/docs"}, []string{"generate"}},
}

// groupOf is the group of pkg (a path below the module): its longest
// matching pattern's.
func groupOf(pkg string) (*group, bool) {
	var best *group
	bestLen := -1
	for i := range groups {
		for _, p := range groups[i].pkgs {
			root, tree := strings.CutSuffix(p, "/...")
			if pkg == root || tree && strings.HasPrefix(pkg, root+"/") {
				if len(root) > bestLen {
					best, bestLen = &groups[i], len(root)
				}
			}
		}
	}
	return best, best != nil
}

// allowed is every group g's packages may depend on: g and, transitively,
// the groups it uses.
func allowed(g *group) map[string]bool {
	out := map[string]bool{}
	var add func(name string)
	add = func(name string) {
		if out[name] {
			return
		}
		out[name] = true
		for i := range groups {
			if groups[i].name == name {
				for _, u := range groups[i].uses {
					add(u)
				}
			}
		}
	}
	add(g.name)
	return out
}

// pkgInfo is one package of go list: its direct and transitive imports
// within the module.
type pkgInfo struct {
	imports, deps []string
}

// listModule runs go list over the module (non-test imports).
func listModule(t *testing.T) map[string]pkgInfo {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	local := func(paths string) []string {
		var own []string
		for _, p := range strings.Fields(paths) {
			if p == module || strings.HasPrefix(p, module+"/") {
				own = append(own, strings.TrimPrefix(strings.TrimPrefix(p, module), "/"))
			}
		}
		return own
	}
	pkgs := map[string]pkgInfo{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			t.Fatalf("go list printed %q", sc.Text())
		}
		pkgs[local(f[0])[0]] = pkgInfo{imports: local(f[1]), deps: local(f[2])}
	}
	return pkgs
}

// via is the import chain from pkg to dep, for the message.
func via(pkgs map[string]pkgInfo, pkg, dep string) string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == dep {
			var chain []string
			for q := dep; q != ""; q = prev[q] {
				chain = append(chain, q)
			}
			slices.Reverse(chain)
			return strings.Join(chain, " -> ")
		}
		for _, i := range pkgs[p].imports {
			if _, seen := prev[i]; !seen {
				prev[i] = p
				queue = append(queue, i)
			}
		}
	}
	return pkg + " -> ... -> " + dep
}

// TestLayering fails on any import that breaks the arrows of
// docs/design.md: every package's imports must be in its group or in one
// its group may use. The allowed sets are closed under the arrows, so
// checking each direct import holds every transitive dependency too; the
// transitive check after it guards that reasoning.
func TestLayering(t *testing.T) {
	pkgs := listModule(t)
	if len(pkgs) < 30 {
		t.Fatalf("go list found %d packages of the module", len(pkgs))
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	direct := 0
	for _, p := range names {
		g, ok := groupOf(p)
		if !ok {
			t.Errorf("%s is in no group of lint_test.go: give it its line (and its row in docs/design.md)", p)
			continue
		}
		may := allowed(g)
		for _, i := range pkgs[p].imports {
			if ig, ok := groupOf(i); ok && !may[ig.name] {
				t.Errorf("%s (%s) imports %s (%s); %s may use only %s", p, g.name, i, ig.name, g.name, list(may))
				direct++
			}
		}
	}
	if direct > 0 || t.Failed() {
		return
	}
	for _, p := range names {
		g, _ := groupOf(p)
		may := allowed(g)
		for _, d := range pkgs[p].deps {
			if dg, ok := groupOf(d); ok && !may[dg.name] {
				t.Errorf("%s (%s) depends on %s (%s): %s", p, g.name, d, dg.name, via(pkgs, p, d))
			}
		}
	}
}

func list(set map[string]bool) string {
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// TestGroupsAreKnown keeps the table honest: every group a group uses
// exists, and every pattern names a package or a subtree that does (or a
// feature that is coming: none now).
func TestGroupsAreKnown(t *testing.T) {
	pkgs := listModule(t)
	names := map[string]bool{}
	for _, g := range groups {
		if names[g.name] {
			t.Errorf("group %q twice", g.name)
		}
		names[g.name] = true
	}
	coming := map[string]bool{}
	for _, g := range groups {
		for _, u := range g.uses {
			if !names[u] {
				t.Errorf("group %q uses %q, which is no group", g.name, u)
			}
		}
		for _, p := range g.pkgs {
			root, tree := strings.CutSuffix(p, "/...")
			found := false
			for q := range pkgs {
				found = found || q == root || tree && strings.HasPrefix(q, root+"/")
			}
			if !found && !coming[p] {
				t.Errorf("group %q names %s, which matches no package", g.name, p)
			}
		}
	}
}
