package writer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
)

var stagedComponents = []string{"Index.db", "Data.db", "TOC.txt"}

// stageAll writes three components (Data.db of 600 KiB, more than one
// buffer) through fsys and commits; it returns the first error.
func stageAll(fsys vfs.FS, dest string) error {
	st, err := NewStaging(fsys, dest, "oa-1-big-")
	if err != nil {
		return err
	}
	defer st.Abort()
	for _, c := range stagedComponents {
		f, err := st.Create("oa-1-big-" + c)
		if err != nil {
			return err
		}
		body := []byte(c)
		if c == "Data.db" {
			body = bytes.Repeat([]byte("data"), 150<<10)
		}
		if _, err := f.Write(body); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return st.Commit()
}

// leftInDest is what a failed staging left in dest: component files and
// staging directories (nil when dest is gone).
func leftInDest(t *testing.T, dest string) (files, staging []string) {
	t.Helper()
	ents, err := os.ReadDir(dest)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			staging = append(staging, e.Name())
		} else {
			files = append(files, e.Name())
		}
	}
	return files, staging
}

// An fsync that fails, of a staged file or of the staging directory,
// fails the write before anything is visible: after Abort the destination
// holds nothing of it. One of the destination, after the renames, leaves
// the whole set or nothing.
func TestStagingFsyncFailure(t *testing.T) {
	for _, c := range []struct {
		name  string
		match func(dest, path string) bool
	}{
		{"Data.db", func(_, p string) bool { return strings.HasSuffix(p, "-Data.db") }},
		{"Index.db", func(_, p string) bool { return strings.HasSuffix(p, "-Index.db") }},
		{"the commit marker", func(_, p string) bool { return strings.HasSuffix(p, commitMarker+".tmp") }},
		{"the staging directory", func(_, p string) bool { return strings.HasPrefix(filepath.Base(p), StagingPrefix) }},
		{"the destination", func(dest, p string) bool { return p == dest }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "out")
			efs := errorfs.New(vfs.Default).FailSync(func(p string) bool { return c.match(dest, p) })
			err := stageAll(efs, dest)
			if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "sync") {
				t.Fatalf("error %v, want the fsync's EIO", err)
			}
			files, staging := leftInDest(t, dest)
			if len(staging) != 0 {
				t.Fatalf("staging directories left: %v", staging)
			}
			if c.name == "the destination" && len(files) == len(stagedComponents) {
				return // committed before the fsync that failed: whole
			}
			if len(files) != 0 {
				t.Fatalf("files left in the destination: %v", files)
			}
		})
	}
}

// A disk that fills at any point of the write fails it with ENOSPC and
// leaves nothing behind once aborted; the next run, with space, writes
// the whole set.
func TestStagingNoSpace(t *testing.T) {
	for _, space := range []int64{0, 5, 100 << 10, 300 << 10, 600<<10 + 12} {
		dest := filepath.Join(t.TempDir(), "out")
		err := stageAll(errorfs.New(vfs.Default).NoSpaceAfterBytes(space), dest)
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("%d bytes of space: error %v, want ENOSPC", space, err)
		}
		if files, staging := leftInDest(t, dest); len(files)+len(staging) != 0 {
			t.Fatalf("%d bytes of space: left %v %v", space, files, staging)
		}
		if err := stageAll(vfs.Default, dest); err != nil {
			t.Fatalf("%d bytes of space, then the rerun: %v", space, err)
		}
		if files, _ := leftInDest(t, dest); len(files) != len(stagedComponents) {
			t.Fatalf("rerun wrote %v", files)
		}
	}
}
