package app

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/tui/views"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

// benchProfile makes a Data.db of about 1.1 GiB: 600,000 partitions of
// 1..60 rows (zipf), text payloads of 40..160 bytes, a few deletions.
const benchProfile = `
name: browse-bench
description: about 1.1 GiB uncompressed for the browse benchmarks
seed: 7
ops: 1
partitions: 600000
schema:
  partition_key: [{name: id, type: text, size: "16", gen: hash}]
  clustering: [{name: seq, type: bigint}]
  columns:
    - {name: payload, type: text, size: "uniform(40,160)"}
    - {name: n, type: bigint}
rows_per_partition: "zipf(60,0.9)"
mix: {insert: 0.97, delete_row: 0.01, delete_cell: 0.01, delete_range: 0.01}
`

var (
	bigOnce sync.Once
	bigPath string
	bigErr  error
)

// bigTable returns $SSTABLETOOL_BENCH_SSTABLE, or generates the benchmark
// sstable once into $TMPDIR/sstabletool-bench-1g (about 15 s) and reuses it.
func bigTable(b *testing.B) string {
	bigOnce.Do(func() {
		if p := os.Getenv("SSTABLETOOL_BENCH_SSTABLE"); p != "" {
			bigPath = p
			return
		}
		dir := filepath.Join(os.TempDir(), "sstabletool-bench-1g")
		p := filepath.Join(dir, "oa-1-big-Data.db")
		if _, err := os.Stat(p); err == nil {
			bigPath = p
			return
		}
		prof, err := workload.ParseProfile([]byte(benchProfile), "browse-bench")
		if err != nil {
			bigErr = err
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			bigErr = err
			return
		}
		res, err := generate.Generate(prof, dir, generate.Options{Version: format.MustVersion("oa")})
		if err != nil {
			bigErr = err
			return
		}
		bigPath = res.DataPath
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigPath
}

// BenchmarkBrowse measures, on a generated sstable of more than 1 GiB, the
// time to the first paint and to the first filled partitions table, the
// full Data.db scan a non-incremental tool waits for (the baseline), and
// the synchronous cost of each keystroke (Update and View, as bubbletea
// does per key; work handed to the background is reported apart).
func BenchmarkBrowse(b *testing.B) {
	path := bigTable(b)
	th := theme.Plain()

	b.Run("baseline_full_scan", func(b *testing.B) {
		for range b.N {
			s, err := sstable.Open(path, sstable.Options{Access: reader.Mmap})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			if err := s.ScanPartitions(sstable.ScanOptions{}, func(*sstable.PartitionSummary) error { n++; return nil }); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	b.Run("first_paint", func(b *testing.B) {
		for range b.N {
			tables, errs := Open([]string{path}, reader.Mmap)
			if len(errs) > 0 {
				b.Fatal(errs)
			}
			a := New(tables, nil, th)
			a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
			_ = a.Init()
			_ = a.Render()
			tables[0].Close()
		}
	})
	b.Run("first_table", func(b *testing.B) {
		for range b.N {
			tables, _ := Open([]string{path}, reader.Mmap)
			a := New(tables, nil, th)
			a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
			msg := a.Init()() // Index.db listing, sorted by size
			a.Update(msg)
			_ = a.Render()
			b.StopTimer()
			a.quit()
			tables[0].Close()
			b.StartTimer()
		}
	})

	// Steady state for the keys: listed, counted, texts indexed.
	d := newDriver(b, 80, 24, path)
	p := d.a.Top().(*views.Partitions)
	if !p.ScanFinished() {
		b.Fatal("scan not finished")
	}
	// key times one keystroke: Update and View. A key that opens a view
	// returns the PushMsg as a command; navigates delivers it too, as the
	// program would before the next paint. Other commands are background
	// work (sorting, filtering, labelling) and are timed apart.
	key := func(name string, k tea.KeyPressMsg, navigates bool, undo ...string) {
		b.Run("key_"+name, func(b *testing.B) {
			var worst time.Duration
			for range b.N {
				start := time.Now()
				_, cmd := d.a.Update(k)
				if navigates && cmd != nil {
					m, ok := cmd().(views.PushMsg)
					if !ok {
						b.Fatalf("%s did not open a view", name)
					}
					d.a.Update(m)
				}
				_ = d.a.Render()
				worst = max(worst, time.Since(start))
				b.StopTimer()
				for _, u := range undo {
					d.a.Update(keyMsg(u))
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
		})
	}
	key("down", keyMsg("down"), false)
	key("pgdown", keyMsg("pgdown"), false)
	key("end", keyMsg("end"), false, "g")
	key("sort_cycle", keyMsg("s"), false)
	d.keys("/")
	key("filter_char", keyMsg("a"), false, "backspace")
	d.keys("esc", "g")
	key("enter_partition", keyMsg("enter"), true, "q")
	key("x_partition_bytes", keyMsg("x"), true, "q")
	d.keys("enter")
	key("row_down", keyMsg("down"), false)
	key("x_row_bytes", keyMsg("x"), true, "q")
	d.keys("q", "m")
	key("metadata_pgdown", keyMsg("pgdown"), false)
	d.keys("q")

	b.Run("background_sort_600k", func(b *testing.B) {
		l := p.List()
		vals := l.Values(catalog.ByCells)
		for range b.N {
			catalog.Order(l.Len(), vals)
		}
	})
	b.Run("background_filter_600k", func(b *testing.B) {
		l := p.List()
		texts := d.a.Top().Table().KeyTexts(l)
		order := catalog.Order(l.Len(), nil)
		b.ResetTimer()
		for range b.N {
			catalog.Filter(order, texts, "dfac")
		}
	})
}

// BenchmarkBigPartition opens the demo's largest partition (about 920 KiB,
// 18,000 rows) and its bytes: the keystroke pays for the first page of
// rows and the first 64 KiB of labels; the rest of the labels is background.
func BenchmarkBigPartition(b *testing.B) {
	dir := b.TempDir()
	path, err := generate.Demo(dir)
	if err != nil {
		b.Fatal(err)
	}
	d := newDriver(b, 200, 60, path)
	tbl := d.a.Top().Table()
	l := d.a.Top().(*views.Partitions).List()
	i := int(d.a.Top().(*views.Partitions).Order()[0])
	env := &views.Env{Theme: d.a.env.Theme, Keys: d.a.env.Keys}
	b.Run("open_partition", func(b *testing.B) {
		for range b.N {
			v := views.NewPartition(env, tbl, l, i)
			v.SetSize(200, 57)
			_ = v.View()
		}
	})
	b.Run("open_bytes_first_64KiB", func(b *testing.B) {
		for range b.N {
			v := views.NewPartitionBytes(env, tbl, l.Offsets[i], l.Sizes[i], "p")
			v.SetSize(200, 57)
			_ = v.View()
		}
	})
	b.Run("background_label_1MiB", func(b *testing.B) {
		data, _ := tbl.Bytes(l.Offsets[i], min(l.Sizes[i], views.MaxBytes))
		for range b.N {
			if _, err := tbl.Labeler().Region(data, l.Offsets[i]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
