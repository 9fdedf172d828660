package upgrade

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sstabletool/sstabletool/format"
)

// Snapshot hard-links every file of the sstable at src (its Data.db) into
// <table dir>/snapshots/<name>/ (created if missing), fsynced: the snapshot
// Cassandra's offline tools take of an sstable before they replace it
// (pre-scrub-<ms>, pre-split-<ms>). A Rewriter calls it before its first
// out.New, so that the snapshot is whole before anything changes; a file
// already linked there (a rerun after a crash) is left as it is.
func Snapshot(out Outputs, src, name string) error {
	d, _, err := format.ParseDescriptor(src)
	if err != nil {
		return err
	}
	dir := filepath.Join(out.Dir(), format.SnapshotsDir, name)
	if err := out.MkdirAll(dir); err != nil {
		return fmt.Errorf("snapshot %s: %w", name, err)
	}
	ents, err := os.ReadDir(out.Dir())
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasPrefix(e.Name(), d.Prefix()) {
			continue
		}
		to := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		if err := out.Link(filepath.Join(out.Dir(), e.Name()), to); err != nil {
			return fmt.Errorf("snapshot %s: %w", name, err)
		}
	}
	if err := out.SyncDir(dir); err != nil {
		return err
	}
	return out.SyncDir(filepath.Dir(dir))
}
