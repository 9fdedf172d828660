package app

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/tui/views"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

func historyPaths(t *testing.T) []string {
	t.Helper()
	p, err := workload.ParseProfile([]byte(generate.HistoryProfile), "test")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions, p.Seed = 12, 4
	dir := filepath.Join(t.TempDir(), "ks", "hist-0123456789abcdef0123456789abcdef")
	res, err := generate.GenerateHistory(p, dir, generate.HistoryOptions{SSTables: 3})
	if err != nil {
		t.Fatal(err)
	}
	return res.DataPaths
}

// M in the sstables view shows the table merged; enter opens a merged
// partition with each part's sstable; e explains it; M goes back.
func TestMergedViews(t *testing.T) {
	paths := historyPaths(t)
	for _, size := range [][2]int{{80, 24}, {200, 60}, {60, 12}} {
		d := newDriver(t, size[0], size[1], paths...)
		if _, ok := d.a.Top().(*views.Sstables); !ok {
			t.Fatalf("starts at %T", d.a.Top())
		}
		d.keys("M")
		mv, ok := d.a.Top().(*views.MergedPartitions)
		if !ok {
			t.Fatalf("M opened %T", d.a.Top())
		}
		d.expect("ks.hist (3 sstables merged)", "KEY", "SSTABLES")
		// The partitions listed are the merge's: those a scan returns.
		tbl, err := merge.Open(paths, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := tbl.Scan(merge.Options{GCGraceSeconds: merge.DefaultGCGraceSeconds})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			p, err := sc.Next()
			if err != nil {
				t.Fatal(err)
			}
			if p == nil {
				break
			}
			if got := mv.Partitions()[n]; string(got.Key) != string(p.Header.Key) || len(got.Sources) != len(p.Sources) {
				t.Fatalf("partition %d: listed %x from %v, the merge has %x from %v", n, got.Key, got.Sources, p.Header.Key, p.Sources)
			}
			n++
		}
		tbl.Close()
		if n != len(mv.Partitions()) || n == 0 {
			t.Fatalf("listed %d partitions, the merge has %d", len(mv.Partitions()), n)
		}
		if size[1] >= 24 {
			if s, _ := d.a.Status(); !strings.Contains(s, "partitions merged from 3 sstables") {
				t.Errorf("status %q", s)
			}
		}
		// A partition held by several sstables.
		for i, p := range mv.Partitions() {
			if len(p.Sources) > 1 {
				for k := 0; k < i; k++ {
					d.keys("down")
				}
				break
			}
		}
		d.keys("enter")
		mp, ok := d.a.Top().(*views.MergedPartition)
		if !ok {
			t.Fatalf("enter opened %T", d.a.Top())
		}
		sourced := regexp.MustCompile(`^  \S.* at \S+\s+\[\d\]$`)
		found := false
		for _, l := range mp.Lines() {
			found = found || sourced.MatchString(l)
		}
		if !found {
			t.Fatalf("no cell with its sstable in:\n%s", strings.Join(mp.Lines(), "\n"))
		}
		d.screen()
		d.keys("e")
		ex, ok := d.a.Top().(*views.Explain)
		if !ok {
			t.Fatalf("e opened %T", d.a.Top())
		}
		text := strings.Join(ex.Lines(), "\n")
		if !strings.Contains(text, ": won") || !strings.Contains(text, "lost: ") {
			t.Fatalf("explanation without winners and losers:\n%s", text)
		}
		d.keys("pgdown", "end")
		d.screen()
		d.keys("esc", "esc")
		if d.a.Top() != views.View(mv) {
			t.Fatalf("back at %T", d.a.Top())
		}
		d.keys("e")
		if _, ok := d.a.Top().(*views.Explain); !ok {
			t.Fatalf("e in the list opened %T", d.a.Top())
		}
		d.keys("esc", "M")
		if _, ok := d.a.Top().(*views.Sstables); !ok {
			t.Fatalf("M in the merged view went to %T", d.a.Top())
		}
		// Again: the merge is kept, not redone.
		d.keys("M")
		if d.a.Top() != views.View(mv) {
			t.Fatalf("M again opened %T, not the same merged view", d.a.Top())
		}
	}
}

// browse --merge starts on the merged view, above the table's own.
func TestStartMerged(t *testing.T) {
	paths := historyPaths(t)
	tables, errs := Open(paths, reader.Mmap)
	t.Cleanup(func() {
		for _, tb := range tables {
			tb.Close()
		}
	})
	a := New(tables, errs, theme.Plain())
	a.StartMerged()
	d := &driver{t: t, a: a}
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.run(a.Init())
	t.Cleanup(func() { a.quit() })
	if _, ok := a.Top().(*views.MergedPartitions); !ok || len(a.Stack()) != 2 {
		t.Fatalf("started at %T (%d views)", a.Top(), len(a.Stack()))
	}
	d.expect("(3 sstables merged)")
	d.keys("M")
	if _, ok := a.Top().(*views.Sstables); !ok {
		t.Fatalf("M went to %T", a.Top())
	}
}

// browse --now: the merges are opened as of that time, and the merged
// partitions read differently before anything expired and after every
// TTL ran out.
func TestMergeAt(t *testing.T) {
	paths := historyPaths(t)
	lines := map[int64][]string{}
	for _, now := range []int64{1, 4_000_000_000} {
		tables, errs := Open(paths, reader.Mmap)
		a := New(tables, errs, theme.Plain())
		a.MergeAt(now)
		a.StartMerged()
		d := &driver{t: t, a: a}
		d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
		d.run(a.Init())
		mv, ok := a.Top().(*views.MergedPartitions)
		if !ok {
			t.Fatalf("started at %T", a.Top())
		}
		for _, m := range a.mergedData {
			if m.Options.Now != now {
				t.Fatalf("merged as of %d, asked for %d", m.Options.Now, now)
			}
		}
		for i := range mv.Partitions() {
			d.keys("enter")
			mp, ok := a.Top().(*views.MergedPartition)
			if !ok {
				t.Fatalf("enter opened %T", a.Top())
			}
			lines[now] = append(lines[now], mp.Lines()...)
			d.keys("esc")
			if i+1 < len(mv.Partitions()) {
				d.keys("down")
			}
		}
		a.quit()
		for _, tb := range tables {
			tb.Close()
		}
	}
	if strings.Join(lines[1], "\n") == strings.Join(lines[4_000_000_000], "\n") {
		t.Fatal("the merged partitions read the same before and after every TTL ran out")
	}
}
