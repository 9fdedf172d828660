package app

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/testindexes"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/tui/views"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

// driver runs the app the way tea.Program does, but synchronously: each
// message goes through Update, and the commands it returns are run (each
// in a goroutine, with a timeout) until none are left.
type driver struct {
	t testing.TB
	a *App
}

func newDriver(t testing.TB, w, h int, paths ...string) *driver {
	t.Helper()
	tables, errs := Open(paths, reader.Mmap)
	t.Cleanup(func() {
		for _, tb := range tables {
			tb.Close()
		}
	})
	a := New(tables, errs, theme.Plain())
	d := &driver{t: t, a: a}
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	d.run(a.Init())
	t.Cleanup(func() { a.quit() })
	return d
}

func (d *driver) run(cmd tea.Cmd) {
	d.t.Helper()
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		done := make(chan tea.Msg, 1)
		go func() { done <- c() }()
		var msg tea.Msg
		select {
		case msg = <-done:
		case <-time.After(10 * time.Second):
			d.t.Fatal("a command did not finish in 10s")
		}
		switch m := msg.(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, m...)
		case tea.QuitMsg:
			return
		default:
			_, next := d.a.Update(m)
			queue = append(queue, next)
		}
	}
}

func (d *driver) send(msgs ...tea.Msg) {
	d.t.Helper()
	for _, m := range msgs {
		_, cmd := d.a.Update(m)
		d.run(cmd)
	}
}

func (d *driver) keys(ks ...string) {
	d.t.Helper()
	for _, k := range ks {
		d.send(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	return textKey(k)
}

// textKey is text typed as one key message: one rune, or several that
// arrived together.
func textKey(s string) tea.KeyPressMsg {
	if r := []rune(s); len(r) == 1 {
		return tea.KeyPressMsg{Code: r[0], Text: s}
	}
	return tea.KeyPressMsg{Code: tea.KeyExtended, Text: s}
}

// screen is the view with escapes removed, checked to be exactly the
// terminal's size: no line wider, none missing.
func (d *driver) screen() string {
	d.t.Helper()
	s := d.a.Render()
	lines := strings.Split(s, "\n")
	if len(lines) != d.a.h {
		d.t.Fatalf("%d lines for a %d-line terminal:\n%s", len(lines), d.a.h, s)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w != d.a.w {
			d.t.Fatalf("line %d is %d cells wide on a %d-cell terminal: %q", i, w, d.a.w, l)
		}
	}
	return ansi.Strip(s)
}

func (d *driver) expect(substrs ...string) string {
	d.t.Helper()
	s := d.screen()
	for _, sub := range substrs {
		if !strings.Contains(s, sub) {
			d.t.Fatalf("screen lacks %q:\n%s", sub, s)
		}
	}
	return s
}

func table(t *testing.T, group, name, version string) string {
	return filepath.Join(fixtures.Table(t, group, name), version+"-1-big-Data.db")
}

// The partitions view of a legacy table lists its five keys, all of the
// same size class, with the counts of the background scan.
func TestPartitionsViewListsTheFiveKeys(t *testing.T) {
	for _, v := range []string{"nb", "nc", "oa"} {
		d := newDriver(t, 80, 24, table(t, v, "legacy_"+v+"_simple", v))
		s := d.expect("5 partitions (Index.db)", "KEY", "TOKEN", "counted rows, cells and tombstones of 5 partitions")
		keys := regexp.MustCompile(`(?m)^[▸ ] ([0-4]) +3[0-4] +\d+ +\d\d B +1 +1 +0 live`).FindAllStringSubmatch(s, -1)
		if len(keys) != 5 {
			t.Fatalf("%s: %d key rows:\n%s", v, len(keys), s)
		}
		seen := map[string]bool{}
		for _, k := range keys {
			seen[k[1]] = true
		}
		if len(seen) != 5 {
			t.Fatalf("%s: keys %v", v, seen)
		}
		// Sorted by size, descending: partition '0' is last, two bytes
		// smaller than the others: written first, its row timestamp is
		// the sstable's minimum, a delta vint of one byte instead of three.
		if keys[4][1] != "0" {
			t.Fatalf("%s: last row is key %s:\n%s", v, keys[4][1], s)
		}
		// s cycles to rows, cells, tombstones and then token order: 0..4.
		d.keys("s", "s", "s", "s")
		s = d.expect("sort: token")
		keys = regexp.MustCompile(`(?m)^[▸ ] ([0-4]) `).FindAllStringSubmatch(s, -1)
		var order string
		for _, k := range keys {
			order += k[1]
		}
		if order != "01234" {
			t.Fatalf("%s: token order %s", v, order)
		}
	}
}

// Opening a clust partition shows its 50 rows, the last after End.
func TestPartitionViewShowsFiftyRows(t *testing.T) {
	d := newDriver(t, 80, 24, table(t, "nc", "legacy_nc_clust", "nc"))
	// Token order, then Home: partition 0 (re-sorting keeps the selection).
	d.keys("s", "s", "s", "s", "g", "enter")
	p, ok := d.a.Top().(*views.Partition)
	if !ok {
		t.Fatalf("top view %T", d.a.Top())
	}
	d.expect("50 rows · 0 markers", "whole partition read", "partition 0 · token 30 · Data.db @0 · 67,194 B",
		"header 15 B: key length 2 + key 1 + DeletionTime 12 (legacy) · LIVE", `row ("0012345678901234`)
	if len(p.Items()) != 50 {
		t.Fatalf("%d items", len(p.Items()))
	}
	d.keys("end")
	s := d.expect(`row ("49012345678901234`)
	if p.Cursor() != 50 {
		t.Fatalf("cursor %d after End", p.Cursor())
	}
	if n := strings.Count(s, "row (\""); n < 10 {
		t.Fatalf("%d rows on screen", n)
	}
	// Every row has its one val cell.
	if !strings.Contains(s, `val = "`) {
		t.Fatalf("no cell shown:\n%s", s)
	}
}

// The hex view of a partition header: 12 bytes of DeletionTime in nc,
// one 0x80 byte in oa. Tab selects key length, key, then DeletionTime.
func TestBytesViewDeletionTimeWidth(t *testing.T) {
	for _, c := range []struct {
		v, hex, label string
	}{
		{"nc", "[7f ff ff ff 80 00 00 00 00 00 00 00]", "field 3/504 @3 · 12 bytes · DeletionTime: partition DeletionTime LIVE (12 bytes, legacy"},
		{"oa", "[80]", "field 3/504 @3 · 1 byte · DeletionTime: partition DeletionTime LIVE (1 byte, compact: 0x80)"},
	} {
		d := newDriver(t, 120, 30, table(t, c.v, "legacy_"+c.v+"_clust", c.v))
		d.keys("s", "s", "s", "s", "g", "x")
		if _, ok := d.a.Top().(*views.Bytes); !ok {
			t.Fatalf("top view %T", d.a.Top())
		}
		d.keys("tab", "tab")
		s := d.expect(c.label, c.hex, "key len 1", `key "0"`)
		// The first line of the dump starts with the key length 00 01 and key '0' (0x30).
		if !regexp.MustCompile(`(?m)^ +0  00 01\|30`).MatchString(s) {
			t.Fatalf("%s: first hex line:\n%s", c.v, s)
		}
		// The same at 80 columns (8 bytes per line): the field line names it.
		d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
		d.expect(c.label[:40])
	}
}

// x on a row shows that row's bytes: flags first, the cell value last.
func TestRowBytes(t *testing.T) {
	d := newDriver(t, 120, 30, table(t, "oa", "legacy_oa_clust", "oa"))
	d.keys("s", "s", "s", "s", "g", "enter", "down", "x")
	b, ok := d.a.Top().(*views.Bytes)
	if !ok {
		t.Fatalf("top %T", d.a.Top())
	}
	sp := b.Spans()
	if len(sp) < 5 || !strings.HasPrefix(sp[0].Label, "row flags") || !strings.HasPrefix(sp[len(sp)-1].Label, "cell val value") {
		t.Fatalf("spans %+v", sp)
	}
	// The first row of oa partition 0 starts right after its 4-byte header.
	d.expect("bytes of row", "Data.db 4..", "field 1/")
}

// Several sstables open on the sstables view; enter opens one, q comes
// back, m shows its metadata; the oa estimate of a legacy table is 11
// bytes per LIVE DeletionTime.
func TestSstablesViewAndMetadata(t *testing.T) {
	d := newDriver(t, 80, 24, table(t, "nc", "legacy_nc_clust", "nc"), table(t, "oa", "legacy_oa_clust", "oa"))
	d.expect("2 sstables", "legacy_nc_clust/nc-1", "legacy_oa_clust/oa-1", "AS OA", "−2.5 KiB",
		"as oa: all components 176,363 → 173,770 B on disk, 2,593 B smaller",
		"Index.db −55 B: DeletionTimes of 5", "partition headers and 5 index entries take 1 byte instead of 12",
		"Statistics.db −2,406 B: oa adds token-space coverage, drops the legacy")
	d.keys("down")
	d.expect("as oa: already in the compact oa layout")
	d.keys("enter")
	d.expect("sstables › legacy_oa_clust/oa-1", "5 partitions (Index.db)")
	d.keys("m")
	d.expect("› metadata", "Identity", "Version                oa (big format) (compact DeletionTime)", "ByteOrderedPartitioner")
	d.keys("q", "q")
	d.expect("as oa: already")
	d.keys("?")
	d.expect("› keys", "filter", "token")
	d.keys("esc", "q")
	if !d.a.quitting {
		t.Fatal("q at the root did not quit")
	}
}

// A da sstable (BTI, Cassandra 5.0) has oa's DeletionTimes already: the
// sstables view says it is da, as `savings` does ("already da, nothing to
// save"), never that it is oa.
func TestSstablesViewOfDA(t *testing.T) {
	bti := filepath.Join(fixtures.Table(t, "da", "legacy_da_clust"), "da-1-bti-Data.db")
	d := newDriver(t, 80, 24, bti, table(t, "oa", "legacy_oa_clust", "oa"))
	s := d.expect("2 sstables", "legacy_da_clust/da-1-bti", "(is da)", "(is oa)",
		"as oa: already da, nothing to save: Cassandra 5.0's trie-indexed", "compact DeletionTimes")
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "da-1") && strings.Contains(l, "is oa") {
			t.Fatalf("a da row says it is oa: %q\n%s", l, s)
		}
	}
	d.keys("down")
	d.expect("as oa: already in the compact oa layout")
}

// The sstables view explains an mc sstable's CompressionInfo.db growth by
// the max compressed length field oa stores, not by a chunk count that
// stays 1.
func TestSstablesViewExplainsCompressionInfo(t *testing.T) {
	p := filepath.Join(fixtures.Dir(t), "realworld", "scylla", "3.x", "deflate", "partition_key_with_values_of_different_types", "mc-1-big-Data.db")
	d := newDriver(t, 200, 60, p, table(t, "oa", "legacy_oa_clust", "oa"))
	s := d.expect("CompressionInfo.db +4 B: oa stores the max compressed length (a 4-byte int), which mc does not; Data.db keeps its 1 chunk",
		"Data.db −3 B (−55 B uncompressed): DeletionTimes of 5 partition headers take 1 byte instead of 12")
	if strings.Contains(s, "more chunks") {
		t.Fatalf("chunk count blamed:\n%s", s)
	}
}

// Every sstable given is listed: one that cannot be opened (a format not
// read yet, a damaged Statistics.db) is a row with its error, never
// dropped, and the count in the title is of all of them.
func TestSstablesViewListsUnreadable(t *testing.T) {
	bti := filepath.Join(fixtures.Table(t, "da", "legacy_da_simple"), "da-1-bti-Data.db")
	noStats := copyFixture(t, "nb", "legacy_nb_simple")
	if err := os.Remove(filepath.Join(noStats, "nb-1-big-Statistics.db")); err != nil {
		t.Fatal(err)
	}
	broken := copyFixture(t, "oa", "legacy_oa_simple")
	if err := os.Truncate(filepath.Join(broken, "oa-1-big-Statistics.db"), 100); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, 100, 30, table(t, "nc", "legacy_nc_simple", "nc"), bti, filepath.Join(noStats, "nb-1-big-Data.db"), filepath.Join(broken, "oa-1-big-Data.db"))
	s := d.expect("4 sstables (2 unreadable)", "legacy_nc_simple/nc-1", "legacy_da_simple/da-1-bti", "unreadable",
		"2 of 4 sstables could not be opened")
	if n := strings.Count(s, "unreadable"); n < 3 { // title + two rows
		t.Fatalf("unreadable rows: %d\n%s", n, s)
	}
	d.keys("down", "down")
	d.expect("(could not be opened)", "Statistics.db is missing")
	d.keys("down")
	d.expect("Statistics.db")
	d.keys("enter")
	if st, isErr := d.a.Status(); !isErr || !strings.Contains(st, "could not be opened") {
		t.Fatalf("enter on an unreadable row: status %q", st)
	}
	if _, ok := d.a.Top().(*views.Sstables); !ok {
		t.Fatalf("enter on an unreadable row left the sstables view for %T", d.a.Top())
	}
}

// copyFixture copies a fixture table's files into a temporary directory.
func copyFixture(t *testing.T, group, name string) string {
	t.Helper()
	src := fixtures.Table(t, group, name)
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Pasted text (a message of its own in Bubble Tea v2) fills an open
// input, and does nothing when none is open.
func TestPasteIntoFilter(t *testing.T) {
	d := newDriver(t, 100, 30, table(t, "me-collections", "utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91", "me"))
	d.send(tea.PasteMsg{Content: "s/"})
	if s := d.expect("sort: size ▼"); strings.Contains(s, "filter keys:") {
		t.Fatalf("a paste with no input open opened one:\n%s", s)
	}
	d.keys("/")
	d.send(tea.PasteMsg{Content: "6"})
	d.expect("filter keys: 6", "1 match")
}

// The filter keeps matching keys; t jumps to a token.
func TestFilterAndToken(t *testing.T) {
	d := newDriver(t, 100, 30, table(t, "me-collections", "utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91", "me"))
	// "/6" in one message, as a fast typist or tmux delivers it.
	d.send(textKey("/6"))
	d.expect("filter keys: 6", "1 match")
	d.keys("enter")
	s := d.expect(`filter "6": 1 match`)
	if rows := regexp.MustCompile(`(?m)^[▸ ] \d `).FindAllString(s, -1); len(rows) != 1 {
		t.Fatalf("rows after filter: %q\n%s", rows, s)
	}
	d.keys("/", "esc")
	d.expect("7 partitions (Index.db)")
	p := d.a.Top().(*views.Partitions)
	l := p.List()
	want := d.a.Top().Table().Token(l.Keys[3])
	d.keys("t")
	d.keys(want, "enter")
	d.expect("token " + want + " → partition")
	if p.Selected() != 3 {
		t.Fatalf("selected %d after jumping to token %s", p.Selected(), want)
	}
	d.keys("t", "notanumber", "enter")
	if st, isErr := d.a.Status(); !isErr || !strings.Contains(st, "notanumber") {
		t.Fatalf("status %q %v", st, isErr)
	}
}

// Collections: a set's elements, a map's entries, one line each.
func TestCollectionsExpanded(t *testing.T) {
	d := newDriver(t, 100, 30, table(t, "me-collections", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91", "me"))
	d.keys("s", "s", "s", "s", "g", "enter")
	d.expect("m (whole collection) deleted", "m[10] = 20", "m[30] = 40")
}

// Every view fits 80x24 and 200x60 exactly (checked by screen), and a
// resize re-lays it out.
func TestEveryViewFitsTheTerminal(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 60}, {60, 12}} {
		d := newDriver(t, size[0], size[1], table(t, "nc", "legacy_nc_clust", "nc"), table(t, "me-collections", "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91", "me"))
		d.screen()
		for _, k := range []string{"enter", "enter", "x", "tab", "pgdown", "q", "down", "x", "q", "q", "m", "pgdown", "q", "q", "?", "q", "down", "enter", "/", "1"} {
			d.keys(k)
			d.screen()
		}
		d.send(tea.WindowSizeMsg{Width: size[0] + 7, Height: size[1] + 3})
		d.screen()
	}
}

// NO_COLOR: a plain renderer emits no escape sequences at all, and the
// cursor stays visible as a marker glyph.
func TestNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	var buf bytes.Buffer
	th := theme.New(theme.Detect(&buf))
	if th.Color {
		t.Fatal("NO_COLOR still has colours")
	}
	tables, _ := Open([]string{table(t, "nc", "legacy_nc_simple", "nc")}, reader.Mmap)
	defer tables[0].Close()
	a := New(tables, nil, th)
	d := &driver{t: t, a: a}
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.run(a.Init())
	out := a.Render()
	if strings.Contains(out, "\x1b[") {
		t.Fatalf("escape sequences with NO_COLOR: %q", out)
	}
	if !strings.Contains(out, "▸ 1 ") {
		t.Fatalf("no cursor marker:\n%s", out)
	}
	a.quit()
}

// The real program, driven through bubbletea with teatest: keys go in,
// the screen shows the partition, then the hex of its header.
func TestProgram(t *testing.T) {
	tables, errs := Open([]string{table(t, "oa", "legacy_oa_simple", "oa")}, reader.Mmap)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	defer tables[0].Close()
	a := New(tables, nil, theme.Plain())
	tm := teatest.NewTestModel(t, a, teatest.WithInitialTermSize(100, 24))
	waitFor := func(s string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	}
	waitFor("counted rows, cells and tombstones of 5 partitions")
	tm.Send(keyMsg("enter"))
	waitFor("1 row · 0 markers")
	tm.Send(keyMsg("x"))
	waitFor("DeletionTime LIVE 1 B")
	tm.Send(keyMsg("ctrl+c"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(*App)
	if _, ok := final.Top().(*views.Bytes); !ok {
		t.Fatalf("final view %T", final.Top())
	}
}

// The mouse wheel moves the selection like the arrow keys.
func TestMouseWheel(t *testing.T) {
	d := newDriver(t, 80, 24, table(t, "nc", "legacy_nc_simple", "nc"))
	p := d.a.Top().(*views.Partitions)
	d.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if got := p.Order()[3]; p.Selected() != int(got) {
		t.Fatalf("wheel down: selected %d, want the 4th row (%d)", p.Selected(), got)
	}
	d.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if p.Selected() != int(p.Order()[0]) {
		t.Fatal("wheel up did not return to the first row")
	}
}

// The generated demo has range tombstones, row and partition deletions,
// TTLs and a static row: the partition view shows them.
func TestPartitionViewShowsDeletions(t *testing.T) {
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 100
	res, err := generate.Generate(p, t.TempDir(), generate.Options{Version: format.MustVersion("nc")})
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, 200, 60, res.DataPath)
	pv := d.a.Top().(*views.Partitions)
	l := pv.List()
	seen := map[string]bool{}
	for i := range l.Len() {
		v := views.NewPartition(d.a.env, d.a.Top().Table(), l, i)
		v.SetSize(200, 1200)
		s := ansi.Strip(v.View())
		for _, want := range []string{"range tombstone INCL_START_BOUND", "range tombstone EXCL_END_BOUND", "range tombstone INCL_END_BOUND",
			"row deleted ts=", "DeletionTime 12 (legacy) · deleted ts=", "static row", "tombstone, local deletion", "ttl 604800s expires"} {
			if strings.Contains(s, want) {
				seen[want] = true
			}
		}
	}
	for _, want := range []string{"range tombstone INCL_START_BOUND", "row deleted ts=", "DeletionTime 12 (legacy) · deleted ts=",
		"static row", "tombstone, local deletion", "ttl 604800s expires"} {
		if !seen[want] {
			t.Errorf("no partition shows %q", want)
		}
	}
}

// A corrupt partition: the scan names the file and offset in the status
// line, marks the partition, and every other partition stays browsable.
func TestCorruptPartitionInStatusLine(t *testing.T) {
	src := fixtures.Table(t, "me-collections", "utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91")
	dir := t.TempDir()
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
	}
	data := filepath.Join(dir, "me-1-big-Data.db")
	b, _ := os.ReadFile(data)
	// Partition 3 in token order (key "2") starts at 127: its row size vint
	// (after a 2+4+12-byte header and the flags) now claims too much.
	b[127+18+1] = 0xfe
	os.WriteFile(data, b, 0o644)
	fixtures.ResealCRC(t, data)

	d := newDriver(t, 120, 30, data)
	st, isErr := d.a.Status()
	if !isErr || !strings.Contains(st, data) || !strings.Contains(st, "Data.db") {
		t.Fatalf("status %q (error %v)", st, isErr)
	}
	s := d.expect("1 partition(s) failed to decode", "7 partitions (Index.db)")
	if !regexp.MustCompile(`(?m)^  2 .* err +err +err ERR`).MatchString(s) {
		t.Fatalf("the corrupt partition is not marked:\n%s", s)
	}
	// Another partition opens and shows its row.
	d.keys("s", "s", "s", "s", "g", "enter")
	d.expect("1 row · 0 markers", "whole partition read")
}

// The metadata view says what `sstabletool metadata` says: tokens with
// their keys, sstablemetadata's "--" for a pending repair stored empty,
// and for a BTI sstable its Partitions.db and Rows.db tries.
func TestMetadataViewOfBTI(t *testing.T) {
	bti := filepath.Join(fixtures.Table(t, "da", "legacy_da_clust"), "da-1-bti-Data.db")
	d := newDriver(t, 160, 120, bti)
	d.keys("m")
	d.expect("› metadata", "First token", "30 (0)", "Pending repair", "--",
		"Partitions.db", "5 keys (first 0, last 4)", "PAYLOAD_ONLY 5",
		"Rows.db", "5 entries (partitions with a row index), 65 blocks (13 to 13 per entry)")
	if s := d.screen(); strings.Contains(s, "Index summary") {
		t.Fatalf("a BTI sstable shows an index summary:\n%s", s)
	}
}

// The sstables view names the SAI files beside an sstable and their
// bytes, apart from its own; its metadata lists each index.
func TestSstablesViewShowsIndexes(t *testing.T) {
	dir := fixtures.CopyTable(t, fixtures.Table(t, "nc", "legacy_nc_clust"))
	data := filepath.Join(dir, "nc-1-big-Data.db")
	names, err := testindexes.SAI(data, true, "val_sai")
	if err != nil {
		t.Fatal(err)
	}
	toc := filepath.Join(dir, "nc-1-big-TOC.txt")
	b, _ := os.ReadFile(toc)
	for _, n := range names {
		b = append(b, n+"\n"...)
	}
	os.WriteFile(toc, b, 0o644)
	d := newDriver(t, 120, 40, data, table(t, "oa", "legacy_oa_clust", "oa"))
	d.expect("indexes beside it: SAI per-sstable components", "SAI val_sai 217 B", "a rewrite leaves them out")
	d.keys("enter", "m", "G")
	d.expect("› metadata", "SAI val_sai: 4 files, 217 bytes")
}
