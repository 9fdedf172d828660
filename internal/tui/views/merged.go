package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
)

// The merged views of browse --merge: a table's partitions as its
// sstables merge them, one partition's rows with each cell's source
// sstable, and the explanation of a partition (every version in every
// sstable, and why each loser lost), one key (e) away from either.

// OpenMergedMsg asks the app for the merged view of the sstables in the
// directory of Table (M in the partitions and sstables views).
type OpenMergedMsg struct{ Table *catalog.Table }

// MergedPartitions lists a merged table's partitions in token order.
type MergedPartitions struct {
	env   *Env
	m     *catalog.Merged
	parts []catalog.MergedPartition
	err   error
	done  bool
	c     cursor
	w, h  int
}

type mergedListMsg struct {
	v     *MergedPartitions
	parts []catalog.MergedPartition
	err   error
}

func (m mergedListMsg) Owner() View { return m.v }

// NewMergedPartitions shows m's partitions; they are merged in the
// background.
func NewMergedPartitions(env *Env, m *catalog.Merged) *MergedPartitions {
	return &MergedPartitions{env: env, m: m}
}

func (v *MergedPartitions) Init() tea.Cmd {
	if v.done {
		return nil
	}
	m := v.m
	return func() tea.Msg {
		parts, err := m.Partitions()
		return mergedListMsg{v: v, parts: parts, err: err}
	}
}

func (v *MergedPartitions) Title() string         { return v.m.Name }
func (v *MergedPartitions) Table() *catalog.Table { return nil }
func (v *MergedPartitions) Capturing() bool       { return false }
func (v *MergedPartitions) Close()                {}
func (v *MergedPartitions) SetSize(w, h int) {
	v.w, v.h = w, h
	v.c.clamp(len(v.parts), v.listHeight())
}
func (v *MergedPartitions) listHeight() int { return max(v.h-2, 1) }

// Partitions are the merged partitions listed so far.
func (v *MergedPartitions) Partitions() []catalog.MergedPartition { return v.parts }

// Selected is the partition under the cursor.
func (v *MergedPartitions) Selected() int { return v.c.pos }

func (v *MergedPartitions) Keys() []key.Binding {
	k := v.env.Keys
	return []key.Binding{k.Open, k.Explain, k.Merge, k.Down}
}

func (v *MergedPartitions) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case mergedListMsg:
		v.parts, v.err, v.done = msg.parts, msg.err, true
		v.c.clamp(len(v.parts), v.listHeight())
		if msg.err != nil {
			return status(msg.err.Error(), true)
		}
		return status(fmt.Sprintf("%d partitions merged from %d sstables", len(v.parts), len(v.m.T.SSTables())), false)
	case tea.KeyPressMsg:
		k := v.env.Keys
		if len(v.parts) > 0 {
			p := &v.parts[v.c.pos]
			switch {
			case key.Matches(msg, k.Open):
				return push(NewMergedPartition(v.env, v.m, p))
			case key.Matches(msg, k.Explain):
				return push(NewExplain(v.env, v.m, p))
			}
		}
	}
	if m := navigation(msg, v.env.Keys); m.ok {
		v.c.apply(m, len(v.parts), v.listHeight())
	}
	return nil
}

func (v *MergedPartitions) View() string {
	th := v.env.Theme
	head := fmt.Sprintf("   %-40s %-12s %8s %s", v.m.KeyHeader(), "SSTABLES", "ROWS", "")
	lines := []string{th.Header.Render(Fit(head, v.w))}
	switch {
	case !v.done:
		lines = append(lines, " merging…")
	case len(v.parts) == 0 && v.err == nil:
		lines = append(lines, " the merge leaves no partition")
	}
	for i := v.c.top; i < len(v.parts) && i < v.c.top+v.listHeight(); i++ {
		p := &v.parts[i]
		mark := "  "
		if i == v.c.pos {
			mark = "▸ "
		}
		del := ""
		if p.Deleted {
			del = "partition deleted"
		}
		line := fmt.Sprintf(" %s%-40s %-12s %8d %s", mark, cellfmt.Truncate(p.KeyText, 40), "["+p.SourceText()+"]", p.Rows, del)
		if i == v.c.pos {
			line = th.Selected.Render(Fit(line, v.w))
		}
		lines = append(lines, line)
	}
	foot := " enter: rows with each cell's sstable · e: why (explain) · M: back to the sstables"
	for len(lines) < v.h-1 {
		lines = append(lines, "")
	}
	lines = append(lines[:min(len(lines), v.h-1)], th.Dim.Render(Fit(foot, v.w)))
	return frame(lines, v.w, v.h)
}

// textView is a scrolled list of lines (a merged partition, an
// explanation).
type textView struct {
	env   *Env
	title string
	lines []string
	err   error
	top   int
	w, h  int
	keys  []key.Binding
}

func (v *textView) Title() string         { return v.title }
func (v *textView) Table() *catalog.Table { return nil }
func (v *textView) Capturing() bool       { return false }
func (v *textView) Close()                {}
func (v *textView) SetSize(w, h int)      { v.w, v.h = w, h; v.scroll(move{}) }
func (v *textView) Keys() []key.Binding   { return v.keys }

// Lines are the view's text lines.
func (v *textView) Lines() []string { return v.lines }

func (v *textView) Init() tea.Cmd {
	if v.err != nil {
		return status(v.err.Error(), true)
	}
	return nil
}

func (v *textView) scroll(m move) {
	c := cursor{pos: v.top, top: v.top}
	if m.ok {
		c.apply(m, len(v.lines), 1)
	}
	v.top = max(0, min(c.pos, len(v.lines)-v.h))
}

func (v *textView) update(msg tea.Msg) {
	if m := navigation(msg, v.env.Keys); m.ok {
		v.scroll(m)
	}
}

func (v *textView) View() string {
	var lines []string
	for i := v.top; i < len(v.lines) && i < v.top+v.h; i++ {
		lines = append(lines, " "+v.lines[i])
	}
	return frame(lines, v.w, v.h)
}

// MergedPartition is one merged partition: its rows, markers and cells,
// each with the sstable ([n]) it came from.
type MergedPartition struct {
	textView
	m *catalog.Merged
	p catalog.MergedPartition
}

// NewMergedPartition merges partition p of m.
func NewMergedPartition(env *Env, m *catalog.Merged, p *catalog.MergedPartition) *MergedPartition {
	v := &MergedPartition{m: m, p: *p}
	v.env, v.title = env, "merged "+cellfmt.Truncate(p.KeyText, 30)
	v.keys = []key.Binding{env.Keys.Explain, env.Keys.Down, env.Keys.PageDown}
	ls, err := m.Lines(p.Key)
	v.err = err
	width := 0
	for _, l := range ls {
		width = max(width, len([]rune(l.Text)))
	}
	for _, l := range ls {
		src := ""
		switch {
		case l.Source > 0:
			src = fmt.Sprintf("[%d]", l.Source)
		case l.Source < 0:
			src = "[merged]"
		}
		v.lines = append(v.lines, l.Text+strings.Repeat(" ", width-len([]rune(l.Text))+2)+src)
	}
	return v
}

func (v *MergedPartition) Update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(tea.KeyPressMsg); ok && key.Matches(m, v.env.Keys.Explain) {
		return push(NewExplain(v.env, v.m, &v.p))
	}
	v.update(msg)
	return nil
}

// Explain is the reconciliation of one partition: every version of every
// part in every sstable, the winner and why each other lost.
type Explain struct{ textView }

// NewExplain explains partition p of m.
func NewExplain(env *Env, m *catalog.Merged, p *catalog.MergedPartition) *Explain {
	v := &Explain{}
	v.env, v.title = env, "explain "+cellfmt.Truncate(p.KeyText, 30)
	v.keys = []key.Binding{env.Keys.Down, env.Keys.PageDown}
	v.lines, v.err = m.Explain(p.Key)
	return v
}

func (v *Explain) Update(msg tea.Msg) tea.Cmd { v.update(msg); return nil }
