package memview

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/memsim"
	"github.com/sstabletool/sstabletool/workload"
)

func report(t *testing.T) *memsim.Report {
	t.Helper()
	p, _ := workload.Builtin("small-partitions")
	p.Partitions = 20000
	rs, err := memsim.Replay(memsim.GeneratorSource(p, 20000), memsim.Options{Shards: 2, HeapSpace: 64 << 20, OffheapSpace: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := workload.NewGenerator(p, 2000)
	writes, err := memsim.CollectWrites(g, -1)
	if err != nil {
		t.Fatal(err)
	}
	br, err := memsim.RunBench(writes, g.Schema(), memsim.BenchOptions{Runs: 1, Writers: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	return &memsim.Report{Settings: memsim.Settings{ToolVersion: "test", Source: "profile", Profile: "small-partitions", Ops: 20000,
		JDK: 11, Cassandra: "4.1", Shards: 2, HeapSpace: 64 << 20, OffheapSpace: 64 << 20, CleanupThreshold: 1.0 / 3}, Results: rs, Bench: br}
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

// The view shows the same picture as the SVG, then the table, the speed
// comparison and the settings, fits the window, scrolls within the
// content and quits on q.
func TestViewTabsAndSize(t *testing.T) {
	m := New(report(t), "memsim test", theme.Plain())
	m.Update(tea.WindowSizeMsg{Width: 90, Height: 20})
	check := func(tab string, want ...string) {
		t.Helper()
		v := m.Render()
		if m.Tab() != tab {
			t.Fatalf("tab %q, want %q", m.Tab(), tab)
		}
		lines := strings.Split(v, "\n")
		if len(lines) != 20 {
			t.Errorf("%s: %d lines for a 20-line window", tab, len(lines))
		}
		for _, l := range lines {
			if w := lipgloss.Width(l); w > 90 {
				t.Errorf("%s: line of %d cells in a 90-cell window: %q", tab, w, l)
			}
		}
		for _, s := range want {
			if !strings.Contains(v, s) {
				t.Errorf("%s view lacks %q:\n%s", tab, s, v)
			}
		}
	}
	check("picture", "bytes per partition", "skiplist heap_buffers", "612.0 on + 0.0 off", "│", "more lines")
	m.Update(key("end"))
	check("picture", "bytes per partition as the memtable grows", "trie (heap_buffers)")
	m.Update(key("tab"))
	check("table", "memtable", "1st flush op", "hashordered  offheap_objects")
	m.Update(key("3"))
	check("speed", "vs skiplist", "write-only", "mixed")
	m.Update(key("tab"))
	check("settings", `"jdk": 11`, `"memtable_cleanup_threshold"`)
	m.Update(key("tab"))
	check("picture")
	for range 100 {
		m.Update(key("down"))
	}
	if m.scroll < 0 || m.scroll > len(m.body())-m.bodyHeight() {
		t.Errorf("scrolled to %d of %d lines", m.scroll, len(m.body()))
	}
	// At 110 columns the picture's bars shrink so that no label or figure
	// is cut: every line fits before clipping.
	m.Update(tea.WindowSizeMsg{Width: 110, Height: 20})
	for _, l := range m.body() {
		if w := lipgloss.Width(l); w > 110 {
			t.Errorf("picture line of %d cells at width 110: %q", w, l)
		}
	}
	if _, cmd := m.Update(key("q")); cmd == nil || cmd() != tea.Quit() {
		t.Error("q does not quit")
	}
}

// Load reads a saved memsim --json result back, and tells other JSON apart.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	rep := report(t)
	b, _ := json.Marshal(rep)
	good := filepath.Join(dir, "memsim.json")
	os.WriteFile(good, b, 0o644)
	got, ok, err := Load(good)
	if err != nil || !ok || len(got.Results) != len(rep.Results) || got.Bench == nil || got.Settings.JDK != 11 {
		t.Fatalf("Load: ok %v err %v", ok, err)
	}
	pic := memsim.NewPicture(got, "x")
	if len(pic.Curves) != 2 {
		t.Errorf("curves lost in JSON: %d", len(pic.Curves))
	}
	for name, content := range map[string]string{"other.json": `{"results": 3}`, "bad.json": `{`, "list.json": `[1,2]`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		if _, ok, err := Load(p); ok || err != nil {
			t.Errorf("%s: ok %v err %v, want not a memsim result", name, ok, err)
		}
	}
	if _, _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}

// Whatever a file holds, Load never panics, and a file it accepts can be
// drawn (text, SVG, terminal view) without panicking.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"settings": {"tool_version": "x"}, "results": [{"memtable": "trie", "allocation": "heap_buffers", "partitions": 2, "on_heap_bytes": 900,
		"samples": [{"ops": 1000, "partitions": 1000, "on_heap_bytes": 5}, {"ops": 2000, "partitions": 2000, "on_heap_bytes": 9}, {"ops": 3000, "partitions": 3000, "on_heap_bytes": 99}]}]}`))
	f.Add([]byte(`{"settings": {"tool_version": "x"}, "bench": {"results": [{"memtable": "skiplist"}]}}`))
	f.Add([]byte(`{"settings": {"tool_version": "x"}, "results": [{"partitions": -1, "flushes_per_million_writes": -3}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "r.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, ok, err := Load(p)
		if err != nil || !ok {
			return
		}
		pic := memsim.NewPicture(rep, "fuzz")
		pic.Text(memsim.TextOptions{})
		memsim.WriteSVG(io.Discard, pic)
		memsim.WriteHTML(io.Discard, rep, pic)
		m := New(rep, "fuzz", theme.Plain())
		m.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
		for range len(m.tabs) {
			m.Render()
			m.Update(key("tab"))
		}
	})
}
