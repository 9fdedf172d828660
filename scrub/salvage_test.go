package scrub

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
)

// damageChunk flips bytes inside stored chunk k of a compressed Data.db
// (so its CRC32 no longer matches) and returns the chunk's uncompressed
// range.
func damageChunk(t *testing.T, dataPath string, k int) (start, end int64) {
	t.Helper()
	s, err := sstable.Open(dataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ci := s.Data().Info()
	length := s.Data().Length()
	s.Close()
	b, err := os.ReadFile(dataPath)
	if err != nil {
		t.Fatal(err)
	}
	off := ci.ChunkOffsets[k]
	for i := int64(4); i < 12; i++ {
		b[off+i] ^= 0x5a
	}
	if err := os.WriteFile(dataPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	start = int64(k) * int64(ci.ChunkLength)
	return start, min(start+int64(ci.ChunkLength), length)
}

// One chunk damaged in the middle of a generated table: every partition
// wholly outside it comes back with identical content, every partition
// touching it is named in the report (and nothing else is), and the
// source is not modified.
func TestDamagedChunkSalvage(t *testing.T) {
	for _, v := range []string{"oa", "nc", "da"} {
		t.Run(v, func(t *testing.T) {
			intact := generated(t, "demo", 400, v, generate.Options{})
			want := contents(t, intact)
			damagedDir := fixtures.CopyTable(t, filepath.Dir(intact))
			src := filepath.Join(damagedDir, filepath.Base(intact))
			s, _ := sstable.Open(src, sstable.Options{})
			chunks := len(s.Data().Info().ChunkOffsets)
			s.Close()
			if chunks < 6 {
				t.Fatalf("only %d chunks", chunks)
			}
			lo, hi := damageChunk(t, src, chunks/2)
			before := readAll(t, damagedDir)

			out := t.TempDir()
			rep, err := Scrub(src, out, Options{})
			if err != nil {
				t.Fatal(err)
			}
			after := readAll(t, damagedDir)
			for name, b := range before {
				if !bytes.Equal(b, after[name]) {
					t.Errorf("the source's %s changed", name)
				}
			}
			if len(after) != len(before) {
				t.Errorf("the source directory holds %d files, had %d", len(after), len(before))
			}
			if !rep.Rewritten || !rep.Verified || len(rep.Outputs) != 1 {
				t.Fatalf("report: rewritten %v verified %v outputs %v", rep.Rewritten, rep.Verified, rep.Outputs)
			}
			got := map[string]string{}
			for _, p := range contents(t, rep.Outputs[0]) {
				got[p.key] = p.text
			}
			lostKeys := map[string]bool{}
			for _, l := range rep.Lost {
				lostKeys[l.KeyHex] = true
			}
			var kept, lost int
			for _, p := range want {
				touches := p.start < hi && p.end > lo
				switch {
				case touches:
					lost++
					if !lostKeys[p.key] {
						t.Errorf("partition %s at %d..%d touches the damaged chunk %d..%d and is not reported lost", p.key, p.start, p.end, lo, hi)
					}
					if _, ok := got[p.key]; ok {
						t.Errorf("partition %s touches the damaged chunk and was written", p.key)
					}
				default:
					kept++
					if got[p.key] != p.text {
						t.Errorf("partition %s at %d..%d: content differs", p.key, p.start, p.end)
					}
				}
			}
			if lost == 0 {
				t.Fatal("no partition touches the damaged chunk")
			}
			if rep.PartitionsLost != int64(lost) || len(rep.Lost) != lost || rep.PartitionsKept != int64(kept) || len(got) != kept {
				t.Errorf("report: %d kept, %d lost (%d named); want %d kept, %d lost; output holds %d",
					rep.PartitionsKept, rep.PartitionsLost, len(rep.Lost), kept, lost, len(got))
			}
			if len(rep.Skipped) == 0 || rep.Skipped[0].Start > lo || rep.Skipped[len(rep.Skipped)-1].End < hi {
				t.Errorf("skipped ranges %+v do not cover the damaged chunk %d..%d", rep.Skipped, lo, hi)
			}
			if !rep.Repaired() {
				t.Error("not reported as repaired")
			}
		})
	}
}

// In abort mode the same damage writes nothing, and validate mode
// reports what skip would do without writing.
func TestDamagedChunkAbortAndValidate(t *testing.T) {
	intact := generated(t, "demo", 400, "oa", generate.Options{})
	dir := fixtures.CopyTable(t, filepath.Dir(intact))
	src := filepath.Join(dir, filepath.Base(intact))
	s, _ := sstable.Open(src, sstable.Options{})
	chunks := len(s.Data().Info().ChunkOffsets)
	s.Close()
	damageChunk(t, src, chunks/2)

	out := filepath.Join(t.TempDir(), "out")
	rep, err := Scrub(src, out, Options{Mode: Abort})
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("abort mode: %v", err)
	}
	if rep == nil || rep.PartitionsLost == 0 {
		t.Fatalf("abort mode report %+v", rep)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("abort mode wrote %d entries into the output", len(ents))
	}
	v, err := Scrub(src, out, Options{Mode: Validate})
	if err != nil {
		t.Fatal(err)
	}
	skip, err := Scrub(src, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.PartitionsLost != skip.PartitionsLost || v.PartitionsKept != skip.PartitionsKept || len(v.Outputs) != 0 {
		t.Errorf("validate: %d kept, %d lost, outputs %v; skip: %d kept, %d lost", v.PartitionsKept, v.PartitionsLost, v.Outputs, skip.PartitionsKept, skip.PartitionsLost)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("validate mode wrote %d entries into the output", len(ents))
	}
}
