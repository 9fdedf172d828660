package upgrade

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// Two UUID sstable ids in Cassandra's base-36 form (the first is from
// Cassandra's DescriptorTest).
const (
	uuidID1 = "3g1m_0nuf_3vj5m2k1125165rxa7"
	uuidID2 = "3g1m_0nuf_3vj5m2k1125165rxa8"
)

// placeSSTable copies a fixture sstable (group/name, generation 1) into
// dir under the generation gen, with mode.
func placeSSTable(t testing.TB, group, name, dir, gen string, mode os.FileMode) {
	t.Helper()
	src := fixtures.Table(t, group, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		d, comp, err := format.ParseDescriptor(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		d.Generation, d.Dir = gen, dir
		if err := os.WriteFile(d.Path(comp), b, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d.Path(comp), mode)
	}
}

// node is a stopped node's data directory built from real fixtures:
//
//	data/ks1/simple-<id>/    nb-1, nc-2 (legacy_*_simple), oa-3; mode 0640
//	                         snapshots/snap1/nb-1 (hard links, as nodetool snapshot makes)
//	                         backups/nb-7 (a copy of nb-1: the next generation is 8)
//	data/ks2/clust-<id>/     nb-<uuid>, nc-<uuid> (legacy_*_clust): UUID ids
//	data/ks2/counter-<id>/   nb-5 (legacy_nb_clust_counter)
type node struct {
	root, data string
	simple     string
	clust      string
	counter    string
	// originals are the sstables before the upgrade, copied aside, by
	// table directory: each must be live exactly once afterwards.
	originals map[string][]string
}

func newNode(t testing.TB) *node { return buildNode(t, false) }

// newSmallNode is newNode with the small fixtures throughout (the UUID
// table holds the *_simple_counter sstables, the counter table
// legacy_nb_simple_counter): what the crash tests rebuild hundreds of
// times.
// It lives in memory (/dev/shm) where there is one: the crash tests are
// about the order of changes, which a page cache keeps just the same, and
// an ext4 fsync costs more than the rest of a trial.
func newSmallNode(t testing.TB) *node { return buildNode(t, true) }

func tempRoot(t testing.TB, fast bool) string {
	if fast {
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			if dir, err := os.MkdirTemp("/dev/shm", "sstabletool-upgrade-"); err == nil {
				t.Cleanup(func() { os.RemoveAll(dir) })
				return dir
			}
		}
	}
	return t.TempDir()
}

func buildNode(t testing.TB, small bool) *node {
	t.Helper()
	root := tempRoot(t, small)
	n := &node{root: root, data: filepath.Join(root, "data"), originals: map[string][]string{}}
	n.simple = filepath.Join(n.data, "ks1", "simple-0f3e4a70c67c11eeb4a4d93dc8a1f6a2")
	n.clust = filepath.Join(n.data, "ks2", "clust-1a2b3c70c67c11eeb4a4d93dc8a1f6a2")
	n.counter = filepath.Join(n.data, "ks2", "counter-2b3c4d70c67c11eeb4a4d93dc8a1f6a2")
	placeSSTable(t, "nb", "legacy_nb_simple", n.simple, "1", 0o640)
	placeSSTable(t, "nc", "legacy_nc_simple", n.simple, "2", 0o640)
	placeSSTable(t, "oa", "legacy_oa_simple", n.simple, "3", 0o640)
	snap := filepath.Join(n.simple, "snapshots", "snap1")
	os.MkdirAll(snap, 0o755)
	ents, _ := os.ReadDir(n.simple)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "nb-1-big-") {
			if err := os.Link(filepath.Join(n.simple, e.Name()), filepath.Join(snap, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	placeSSTable(t, "nb", "legacy_nb_simple", filepath.Join(n.simple, "backups"), "7", 0o644)
	clust, counter := "clust", "clust_counter"
	if small {
		clust, counter = "simple_counter", "simple_counter"
	}
	placeSSTable(t, "nb", "legacy_nb_"+clust, n.clust, uuidID1, 0o644)
	placeSSTable(t, "nc", "legacy_nc_"+clust, n.clust, uuidID2, 0o644)
	placeSSTable(t, "nb", "legacy_nb_"+counter, n.counter, "5", 0o644)
	for _, dir := range []string{n.simple, n.clust, n.counter} {
		keep := filepath.Join(root, "originals", filepath.Base(dir))
		for _, p := range liveSSTables(t, dir) {
			d, _, _ := format.ParseDescriptor(p)
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), d.Prefix()) {
					b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
					os.MkdirAll(keep, 0o755)
					os.WriteFile(filepath.Join(keep, e.Name()), b, 0o644)
				}
			}
			n.originals[dir] = append(n.originals[dir], d.WithDir(keep).Path(format.ComponentData))
		}
	}
	return n
}

func (n *node) tables() []string { return []string{n.simple, n.clust, n.counter} }

// liveSSTables lists the sstables of a directory that Cassandra would
// load (no transaction log may be pending: callers clean up first).
func liveSSTables(t testing.TB, dir string) []string {
	t.Helper()
	res := format.Find([]string{dir}, format.FindOptions{})
	var out []string
	for _, f := range res.SSTables {
		if f.Err != nil {
			t.Fatalf("%s: %v", f.Path, f.Err)
		}
		out = append(out, f.Path)
	}
	return out
}

// checkOneCopy checks the invariant: every original sstable of dir is
// live exactly once (as itself or as a rewrite with the same content),
// and nothing else is live. upgraded demands every one is in version to.
func (n *node) checkOneCopy(t testing.TB, dir string, to format.Version, upgraded bool) error {
	live := liveSSTables(t, dir)
	if len(live) != len(n.originals[dir]) {
		return fmt.Errorf("%s: %d live sstables %v, want %d", dir, len(live), live, len(n.originals[dir]))
	}
	// Timestamps pick the candidate (the fixtures' differ per version);
	// the content decides.
	type span struct{ min, max int64 }
	spanOf := func(p string) (span, *sstable.SSTable, error) {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			return span{}, nil, fmt.Errorf("%s does not open: %v", p, err)
		}
		return span{s.Stats().Stats.MinTimestamp, s.Stats().Stats.MaxTimestamp}, s, nil
	}
	byTime := map[span][]*sstable.SSTable{}
	for _, l := range live {
		sp, s, err := spanOf(l)
		if err != nil {
			return err
		}
		defer s.Close()
		byTime[sp] = append(byTime[sp], s)
	}
	for _, orig := range n.originals[dir] {
		sp, a, err := spanOf(orig)
		if err != nil {
			return err
		}
		found := 0
		for _, b := range byTime[sp] {
			if convert.SameContent(a, b) == nil {
				found++
			}
		}
		a.Close()
		if found != 1 {
			return fmt.Errorf("%s: original %s is live %d times", dir, filepath.Base(orig), found)
		}
	}
	if upgraded {
		for _, l := range live {
			d, _, _ := format.ParseDescriptor(l)
			if d.Version.Name != to.Name {
				return fmt.Errorf("%s is still %s", l, d.Version.Name)
			}
		}
	}
	return nil
}

func hashTree(t testing.TB, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}
