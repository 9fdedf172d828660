package writer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// A Schema taken from an nc sstable encodes partition deletions in the
// legacy layout; writing it as oa would produce headers that oa readers
// decode as other DeletionTimes, so the writer refuses the mismatch.
func TestSSTableWriterRejectsSchemaOfOtherVersion(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures.Table(t, "nc", "legacy_nc_clust"), "*-Data.db"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Data.db in the fixture: %v", err)
	}
	src, err := sstable.Open(files[0], sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cfg := Config{Version: format.MustVersion("oa"), Header: src.Stats().Header, Schema: src.Schema(),
		Partitioner: src.Stats().Validation.Partitioner}
	dest := filepath.Join(t.TempDir(), "out")
	w, err := NewSSTableWriter(dest, cfg)
	if err == nil {
		w.Abort()
		t.Fatal("an nc Schema with an oa Config was accepted")
	}
	if !strings.Contains(err.Error(), `"nc"`) || !strings.Contains(err.Error(), `"oa"`) {
		t.Errorf("error does not name both versions: %v", err)
	}
	schema := *src.Schema()
	schema.Version = cfg.Version
	cfg.Schema = &schema
	w, err = NewSSTableWriter(dest, cfg)
	if err != nil {
		t.Fatalf("matching versions: %v", err)
	}
	w.Abort()
}
