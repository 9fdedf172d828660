package convert

import (
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/verify"
	"github.com/sstabletool/sstabletool/writer"
)

func hashDir(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

// TestCrashAnywhere kills the conversion at random points (a byte count
// across all files written, or a rename) and checks the output directory
// holds either no sstable or a complete one that verifies, and that the
// source never changes. Half the trials write into a directory that does
// not exist yet (one atomic rename), half into an existing one.
func TestCrashAnywhere(t *testing.T) {
	srcDir := fixtures.Table(t, "nc", "legacy_nc_clust")
	src := dataPath(t, srcDir)
	before := hashDir(t, srcDir)
	to := format.MustVersion("oa")

	// The total a full conversion writes bounds the crash points.
	full, err := Convert(src, filepath.Join(t.TempDir(), "full"), Options{To: to})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, c := range full.Components {
		total += c.After
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 60
	complete := 0
	for i := 0; i < trials; i++ {
		root := t.TempDir()
		out := filepath.Join(root, "data", "ks", "tbl")
		existing := i%2 == 1
		if existing {
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(out, "unrelated.txt"), []byte("x"), 0o644)
		}
		o := Options{To: to, Verify: i%3 == 0, crash: true, crashBytes: -1, crashRenames: -1}
		if rng.IntN(4) == 0 {
			o.crashRenames = rng.IntN(len(full.Components) + 1)
		} else {
			o.crashBytes = rng.Int64N(total + 1)
		}
		res, err := Convert(src, out, o)
		if err != nil && !errors.Is(err, writer.ErrInjectedCrash) {
			t.Fatalf("trial %d: unexpected error %v", i, err)
		}
		found, ferr := format.FindSSTables([]string{out}, true)
		if ferr != nil && !errors.Is(ferr, os.ErrNotExist) {
			if _, serr := os.Stat(out); serr == nil {
				t.Fatalf("trial %d: scanning output: %v", i, ferr)
			}
		}
		switch {
		case err != nil && len(found) != 0:
			t.Fatalf("trial %d (bytes %d renames %d): crashed, yet %v is in the output directory", i, o.crashBytes, o.crashRenames, found)
		case err == nil:
			if len(found) != 1 {
				t.Fatalf("trial %d: finished but output holds %v", i, found)
			}
			if rep := verify.SSTable(found[0], sstable.Options{}, nil); !rep.OK() {
				t.Fatalf("trial %d: complete output does not verify: %v", i, rep.Problems)
			}
			if res.Output != found[0] {
				t.Fatalf("trial %d: output %s, found %s", i, res.Output, found[0])
			}
			complete++
		}
		// Nothing else inside the destination but what was there.
		if ents, err := os.ReadDir(out); err == nil {
			for _, e := range ents {
				if e.IsDir() {
					t.Fatalf("trial %d: directory %s left inside the output", i, e.Name())
				}
			}
		}
	}
	if after := hashDir(t, srcDir); len(after) != len(before) {
		t.Fatal("source directory changed")
	} else {
		for k, v := range before {
			if after[k] != v {
				t.Fatalf("source %s changed", k)
			}
		}
	}
	t.Logf("%d of %d trials completed before the crash point", complete, trials)
}
