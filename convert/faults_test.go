package convert

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// A conversion whose disk fails (an fsync's EIO, the disk full at any
// point) says so, leaves no sstable and no staging directory in the
// output, never touches the source, and does not stand in the way of the
// next run.
func TestConvertDiskFaults(t *testing.T) {
	srcDir := fixtures.Table(t, "nc", "legacy_nc_clust")
	src := dataPath(t, srcDir)
	before := hashDir(t, srcDir)
	to := format.MustVersion("oa")
	full, err := Convert(src, filepath.Join(t.TempDir(), "full"), Options{To: to})
	if err != nil {
		t.Fatal(err)
	}
	want := hashDir(t, filepath.Dir(full.Output))
	var total int64
	for _, c := range full.Components {
		total += c.After
	}
	type fault struct {
		name string
		fs   func() *errorfs.FS
		want error
	}
	faults := []fault{
		{"fsync of Data.db", func() *errorfs.FS {
			return errorfs.New(vfs.Default).FailSync(func(p string) bool { return strings.HasSuffix(p, "-Data.db") })
		}, syscall.EIO},
		{"fsync of Statistics.db", func() *errorfs.FS {
			return errorfs.New(vfs.Default).FailSync(func(p string) bool { return strings.HasSuffix(p, "-Statistics.db") })
		}, syscall.EIO},
		{"fsync of the staging directory", func() *errorfs.FS {
			return errorfs.New(vfs.Default).FailSync(func(p string) bool { return strings.HasPrefix(filepath.Base(p), writer.StagingPrefix) })
		}, syscall.EIO},
	}
	for _, space := range []int64{0, total / 3, total - 1} {
		faults = append(faults, fault{fmt.Sprintf("disk full after %d bytes", space), func() *errorfs.FS {
			return errorfs.New(vfs.Default).NoSpaceAfterBytes(space)
		}, syscall.ENOSPC})
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "ks", "tbl")
			_, err := convertOn(f.fs(), src, out, Options{To: to, Verify: true})
			if !errors.Is(err, f.want) {
				t.Fatalf("error %v, want %v", err, f.want)
			}
			if ents, err := os.ReadDir(out); err == nil && len(ents) != 0 {
				t.Fatalf("the failed conversion left %d entries in the output (%s...)", len(ents), ents[0].Name())
			}
			if _, err := Convert(src, out, Options{To: to}); err != nil {
				t.Fatalf("the next run: %v", err)
			}
			if got := hashDir(t, out); !sameFiles(got, want) {
				t.Fatal("the next run's output differs from an undisturbed run's")
			}
		})
	}
	if after := hashDir(t, srcDir); !sameFiles(after, before) {
		t.Fatal("the source changed")
	}
}
