package views

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
	"github.com/sstabletool/sstabletool/internal/words"
)

// Metadata shows everything `sstabletool metadata` knows about a table
// (inspect.ReadMetadata), grouped into sections, plus the CREATE TABLE the
// serialization header implies.
type Metadata struct {
	env  *Env
	t    *catalog.Table
	vp   viewport.Model
	m    *inspect.Metadata
	err  error
	w, h int
}

// NewMetadata reads the table's metadata.
func NewMetadata(env *Env, t *catalog.Table) *Metadata {
	v := &Metadata{env: env, t: t, vp: viewport.New()}
	v.vp.MouseWheelEnabled = true
	v.m, v.err = t.Metadata()
	return v
}

func (v *Metadata) Init() tea.Cmd {
	if v.err != nil {
		return status(v.err.Error(), true)
	}
	return nil
}

func (v *Metadata) Title() string         { return "metadata" }
func (v *Metadata) Table() *catalog.Table { return v.t }
func (v *Metadata) Capturing() bool       { return false }
func (v *Metadata) Close()                {}
func (v *Metadata) Keys() []key.Binding {
	k := v.env.Keys
	return []key.Binding{k.Down, k.PageDown, k.Home}
}

func (v *Metadata) SetSize(w, h int) {
	v.w, v.h = w, h
	v.vp.SetWidth(w)
	v.vp.SetHeight(h)
	v.vp.SetContent(clip(v.content(), w))
}

func (v *Metadata) Update(msg tea.Msg) tea.Cmd {
	if mv := navigation(msg, v.env.Keys); mv.ok {
		scrollViewport(&v.vp, mv)
	}
	return nil
}

func (v *Metadata) View() string { return frame(strings.Split(v.vp.View(), "\n"), v.w, v.h) }

func (v *Metadata) content() string {
	th := v.env.Theme
	if v.err != nil {
		return " " + th.Error.Render(v.err.Error())
	}
	m := v.m
	var b strings.Builder
	section := func(name string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(" " + th.Section.Render(name) + "\n")
	}
	kw := 30
	if v.w < 90 {
		kw = 22
	}
	p := func(k string, val any) {
		b.WriteString("   " + th.Label.Render(Fit(k, kw)) + " " + fmt.Sprint(val) + "\n")
	}
	// The fields, their wording and order are sstablemetadata's, shared
	// with `sstabletool metadata` (inspect.Describe); the view only groups
	// them under their sections and draws the histograms compactly.
	hist := func(name string, h inspect.Histogram) {
		p(name, fmt.Sprintf("count %d · min %d · max %d · mean %d", h.Count, h.Min, h.Max, h.Mean))
		p("", fmt.Sprintf("p50 %d · p75 %d · p95 %d · p99 %d", h.P50, h.P75, h.P95, h.P99))
		for _, bk := range h.Buckets {
			off := "overflow"
			if bk.Offset != math.MaxInt64 {
				off = "≤ " + words.Thousands(bk.Offset)
			}
			p("", fmt.Sprintf("%16s  %s", off, words.Thousands(bk.Count)))
		}
	}
	current := ""
	for _, f := range m.Describe(time.Microsecond) {
		if f.Section != current {
			current = f.Section
			section(current)
		}
		switch f.Kind {
		case inspect.FieldHistograms:
			hist("Partition size (bytes)", m.PartitionSize)
			hist("Cells per partition", m.CellCount)
			if len(m.TombstoneDropTimes) == 0 {
				p("Tombstone drop times", "none")
			}
			for _, bin := range m.TombstoneDropTimes {
				p("Drop time "+cellfmt.Seconds(bin.Time), words.Thousands(bin.Count))
			}
		default:
			val := f.Value
			if f.Comment != "" {
				val += " " + th.Dim.Render("("+f.Comment+")")
			}
			p(f.Name, val)
		}
	}

	section("Schema (names are placeholders: sstables do not store key column names)")
	for _, line := range strings.Split(strings.TrimRight(v.t.CreateTable(), "\n"), "\n") {
		b.WriteString("   " + line + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
