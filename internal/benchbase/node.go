package benchbase

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// NodeEnv names the directory where the node benchmark's data directory
// is generated once and kept (it takes a few minutes and about 2.3 GB):
// a benchmark that needs it (Node) is skipped when the variable is unset,
// so it never runs in CI.
const NodeEnv = "SSTABLE_BENCH_NODE"

// nodeVersion names the layout below; a change to it is a new directory
// under NodeEnv, never a stale one reused.
const nodeVersion = "node-v2"

// nodeTable is one table of the node: its profile, version and the
// Data.db sizes on disk of its sstables, in MB.
type nodeTable struct {
	keyspace, name string
	profile        string
	version        string
	sizesMB        []int
}

// nodeLayout is the node benchmark's data directory: 20 tables in 4
// keyspaces, the built-in profiles in turn, nc, nb and me sstables (all
// older than oa, so upgrade rewrites every one), each table with sstables
// of 1, 4 and 16 MB, half of them one of 64 MB too, and four with one of
// 100 to 500 MB (compressed Data.db, within 8%): 74 sstables, about 2.2 GB
// of Data.db (3.8 GB uncompressed). It is what a node's
// sstables look like to an upgrade: every size, many small ones, a few
// that dominate.
func nodeLayout() []nodeTable {
	profiles := []string{"demo", "small-partitions", "time-series-ttl", "wide-partitions", "deletes"}
	versions := []string{"nc", "nc", "nb", "nc", "me"}
	big := map[int]int{0: 500, 6: 300, 12: 200, 18: 100}
	var out []nodeTable
	for i := range 20 {
		t := nodeTable{keyspace: fmt.Sprintf("ks%d", i/5), name: fmt.Sprintf("t%02d", i),
			profile: profiles[i%len(profiles)], version: versions[i%len(versions)], sizesMB: []int{1, 4, 16}}
		if i < 10 {
			t.sizesMB = append(t.sizesMB, 64)
		}
		if mb, ok := big[i]; ok {
			t.sizesMB = append(t.sizesMB, mb)
		}
		out = append(out, t)
	}
	return out
}

// calibration is how many partitions of each profile a sample has, about
// 1 to 4 MB of compressed Data.db: the sample's size per partition sizes
// the node's sstables.
var calibration = map[string]int64{"demo": 1000, "small-partitions": 50000, "time-series-ttl": 200, "wide-partitions": 20, "deletes": 1000}

// Node returns the node benchmark's data directory (nodeLayout), under
// the directory NodeEnv names, generating it there the first time
// (`sstabletool generate` of each sstable, by the package the command
// calls); it skips b when NodeEnv is unset. The directory is only read:
// a benchmark that changes a node (upgrade) works on a copy (LinkCopy).
func Node(b testing.TB) string {
	root := os.Getenv(NodeEnv)
	if root == "" {
		b.Skipf("%s is not set: no node to run on (see docs/performance.md)", NodeEnv)
	}
	dir := filepath.Join(root, nodeVersion)
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	b.Logf("generating the node benchmark's data directory in %s (once; about 2.2 GB)", dir)
	if err := generateNode(root, dir); err != nil {
		b.Fatal(err)
	}
	return dir
}

// generateNode writes nodeLayout into a temporary directory under root
// and renames it to dir once whole, so that a killed generation is never
// taken for a node.
func generateNode(root, dir string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	olds, _ := filepath.Glob(filepath.Join(root, "."+nodeVersion+"-*"))
	for _, o := range olds {
		os.RemoveAll(o)
	}
	tmp, err := os.MkdirTemp(root, "."+nodeVersion+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	perPartition := map[string]float64{}
	for name, n := range calibration {
		p, err := nodeProfile(name)
		if err != nil {
			return err
		}
		p.Partitions = n
		res, err := generate.Generate(p, filepath.Join(tmp, "calibration", name), generate.Options{Version: format.MustVersion("nc")})
		if err != nil {
			return err
		}
		fi, err := os.Stat(res.DataPath)
		if err != nil {
			return err
		}
		perPartition[name] = float64(fi.Size()) / float64(n)
	}
	if err := os.RemoveAll(filepath.Join(tmp, "calibration")); err != nil {
		return err
	}
	for ti, t := range nodeLayout() {
		tdir := filepath.Join(tmp, t.keyspace, fmt.Sprintf("%s-%032x", t.name, 0x5ab1e000+ti))
		for si, mb := range t.sizesMB {
			p, err := nodeProfile(t.profile)
			if err != nil {
				return err
			}
			want := float64(mb) * 1e6
			p.Partitions = max(1, int64(want/perPartition[t.profile]))
			o := generate.Options{Version: format.MustVersion(t.version), Seed: uint64(1000*ti + si + 1), Generation: fmt.Sprint(si + 1)}
			// A big table compresses better than the sample: one more
			// try, sized by the first, brings it within a few percent.
			for try := 0; ; try++ {
				res, err := generate.Generate(p, tdir, o)
				if err != nil {
					return fmt.Errorf("%s: %w", tdir, err)
				}
				fi, err := os.Stat(res.DataPath)
				if err != nil {
					return err
				}
				got := float64(fi.Size())
				if try > 0 || (got > 0.92*want && got < 1.08*want) {
					break
				}
				if err := removeSSTable(res.DataPath); err != nil {
					return err
				}
				p.Partitions = max(1, int64(float64(p.Partitions)*want/got))
			}
		}
	}
	return os.Rename(tmp, dir)
}

// nodeProfile is the profile generate's name stands for: demo, or a
// built-in one.
func nodeProfile(name string) (*workload.Profile, error) {
	if name == "demo" {
		return workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	}
	p, ok := workload.Builtin(name)
	if !ok {
		return nil, fmt.Errorf("no built-in profile %s", name)
	}
	return p, nil
}

// removeSSTable removes the files of the sstable whose Data.db is data.
func removeSSTable(data string) error {
	files, err := filepath.Glob(strings.TrimSuffix(data, format.ComponentData) + "*")
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return nil
}

// DataFiles is every Data.db under dir, hidden directories left out.
func DataFiles(b testing.TB, dir string) []string {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), "-"+format.ComponentData) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// LinkCopy makes dst a copy of the directory tree src whose files are
// hard links to src's: what a benchmark that rewrites a node in place
// runs on, since a rewrite creates new files and only unlinks the old
// ones, which leaves src as it was.
func LinkCopy(b testing.TB, src, dst string) {
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		return os.Link(p, to)
	})
	if err != nil {
		b.Fatal(err)
	}
}
