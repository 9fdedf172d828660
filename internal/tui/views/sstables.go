package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/words"
)

// Sstables lists several sstables with their version, size, compression,
// timestamps, droppable tombstones and what rewriting each legacy one as
// oa would change on disk (estimated one after the other in the
// background). Sstables that could not be opened are listed too, after
// the others, with their error.
type Sstables struct {
	env        *Env
	tables     []*catalog.Table
	unreadable []catalog.Unreadable
	tbl        table.Model
	w, h       int

	savings []*catalog.Savings
	saveErr []error
	pending int // index being estimated, -1 when done
}

// NewSstables lists tables, then the sstables that could not be opened.
func NewSstables(env *Env, tables []*catalog.Table, unreadable []catalog.Unreadable) *Sstables {
	th := env.Theme
	st := table.DefaultStyles()
	st.Header = th.Header.Padding(0, 1, 0, 0)
	st.Cell = lipgloss.NewStyle().Padding(0, 1, 0, 0)
	st.Selected = th.Selected
	v := &Sstables{env: env, tables: tables, unreadable: unreadable, savings: make([]*catalog.Savings, len(tables)), saveErr: make([]error, len(tables)), pending: -1}
	v.tbl = table.New(table.WithStyles(st), table.WithFocused(true))
	return v
}

type savingsMsg struct {
	owner *Sstables
	i     int
	s     *catalog.Savings
	err   error
}

func (m savingsMsg) Owner() View { return m.owner }

// Init starts the oa estimates.
func (v *Sstables) Init() tea.Cmd { return v.estimateFrom(0) }

// estimateFrom estimates the next legacy sstable at or after i; one at a
// time, since each recompresses its whole Data.db.
func (v *Sstables) estimateFrom(i int) tea.Cmd {
	for ; i < len(v.tables); i++ {
		if v.tables[i].NeedsConversion() {
			break
		}
	}
	if i >= len(v.tables) {
		v.pending = -1
		return nil
	}
	v.pending = i
	t := v.tables[i]
	return func() tea.Msg {
		s, err := t.EstimateOA(nil)
		return savingsMsg{owner: v, i: i, s: s, err: err}
	}
}

func (v *Sstables) Title() string {
	n := len(v.tables) + len(v.unreadable)
	if len(v.unreadable) > 0 {
		return fmt.Sprintf("%d sstables (%d unreadable)", n, len(v.unreadable))
	}
	return fmt.Sprintf("%d sstables", n)
}

func (v *Sstables) Capturing() bool { return false }
func (v *Sstables) Close()          {}
func (v *Sstables) Keys() []key.Binding {
	k := v.env.Keys
	return []key.Binding{k.Open, k.Merge, k.Metadata}
}
func (v *Sstables) Table() *catalog.Table { return v.Selected() }

// selectedUnreadable is the selected row when it is an unreadable sstable.
func (v *Sstables) selectedUnreadable() *catalog.Unreadable {
	if i := v.tbl.Cursor() - len(v.tables); i >= 0 && i < len(v.unreadable) {
		return &v.unreadable[i]
	}
	return nil
}

// Selected is the selected sstable (nil on an unreadable one).
func (v *Sstables) Selected() *catalog.Table {
	if c := v.tbl.Cursor(); c >= 0 && c < len(v.tables) {
		return v.tables[c]
	}
	return nil
}

// Savings is the oa estimate of table i (nil until done or not legacy).
func (v *Sstables) Savings(i int) (*catalog.Savings, error) { return v.savings[i], v.saveErr[i] }

// detailHeight is the lines kept below the table for the selected
// sstable's identity, sizes, timestamps and its oa estimate with the
// reasons; View takes more when the selected sstable needs them.
const detailHeight = 12

func (v *Sstables) SetSize(w, h int) {
	v.w, v.h = w, h
	v.tbl.SetWidth(w)
	v.tbl.SetHeight(max(h-detailHeight, 3))
	v.refresh()
}

func (v *Sstables) wide() bool { return v.w >= 150 }

func (v *Sstables) refresh() {
	cols := []table.Column{{Title: "", Width: 2}, {Title: "SSTABLE", Width: 0}, {Title: "VER", Width: 3},
		{Title: "PARTITIONS", Width: 10}, {Title: "ON DISK", Width: 9}, {Title: "UNCOMPR.", Width: 9},
		{Title: "RATIO", Width: 5}, {Title: "AS OA", Width: 10}}
	if v.wide() {
		cols = append(cols, table.Column{Title: "MIN TIMESTAMP", Width: 20}, table.Column{Title: "MAX TIMESTAMP", Width: 20},
			table.Column{Title: "DROPPABLE", Width: 9})
	}
	used := 0
	for _, c := range cols {
		used += c.Width + 1 // cell padding
	}
	cols[1].Width = max(v.w-used-2, 12)
	rows := make([]table.Row, 0, len(v.tables)+len(v.unreadable))
	cur := v.tbl.Cursor()
	mark := func(i int) string {
		if i == cur {
			return theme.Cursor
		}
		return theme.NoCursor
	}
	for i, t := range v.tables {
		r := table.Row{mark(i), t.Name, t.Version(), "", cellfmt.Human(t.DiskSize), cellfmt.Human(t.S.Data().Length()), "", v.savingText(i, false)}
		var ratio float64
		m, err := t.Metadata()
		if err == nil {
			r[3] = words.Thousands(m.EstimatedKeys)
			if m.Compression != nil {
				ratio = m.Compression.Ratio
			}
		}
		if ratio > 0 {
			r[6] = fmt.Sprintf("%.2f", ratio)
		} else {
			r[6] = "-"
		}
		if v.wide() && m != nil {
			r = append(r, shortMicros(m.MinTimestamp), shortMicros(m.MaxTimestamp), fmt.Sprintf("%.4f", m.EstimatedDroppable))
		}
		rows = append(rows, r)
	}
	for j, u := range v.unreadable {
		r := table.Row{mark(len(v.tables) + j), u.Name(), u.Version(), "-", "-", "-", "-", "unreadable"}
		if v.wide() {
			r = append(r, "", "", "")
		}
		rows = append(rows, r)
	}
	// Columns must change before rows when their number changes.
	v.tbl.SetRows(nil)
	v.tbl.SetColumns(cols)
	v.tbl.SetRows(rows)
	v.tbl.SetCursor(cur)
}

func shortMicros(us int64) string {
	s := cellfmt.Micros(us)
	if len(s) > 19 {
		return s[:19]
	}
	return s
}

// savingText is what the oa rewrite changes on disk, all components
// together: short for the table ("−2.5 KiB"), long for the detail lines.
func (v *Sstables) savingText(i int, long bool) string {
	t := v.tables[i]
	switch {
	case !t.NeedsConversion():
		// oa, or da: Cassandra 5.0's trie-indexed format, whose DeletionTimes
		// are oa's already (converting it to oa would only trade
		// Partitions.db and Rows.db for Index.db and Summary.db).
		ver := t.Version()
		if long {
			if t.S.Version().IsBTI() {
				return "already " + ver + ", nothing to save: Cassandra 5.0's trie-indexed layout, with oa's compact DeletionTimes"
			}
			return "already in the compact oa layout"
		}
		return "(is " + ver + ")"
	case v.saveErr[i] != nil:
		if long {
			return "estimate failed: " + v.saveErr[i].Error()
		}
		return "error"
	case v.savings[i] == nil:
		if i == v.pending {
			return "estimating…"
		}
		return "queued"
	}
	s := v.savings[i]
	d := s.After - s.Before
	if !long {
		if d > 0 {
			return "+" + cellfmt.Human(d)
		}
		return strings.Replace(cellfmt.Human(d), "-", "−", 1)
	}
	verb := "smaller"
	if d > 0 {
		verb = "larger"
	}
	return fmt.Sprintf("all components %s → %s on disk, %s %s", words.Thousands(s.Before), cellfmt.Bytes(s.After), cellfmt.Bytes(max(d, -d)), verb)
}

func (v *Sstables) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case savingsMsg:
		v.savings[msg.i], v.saveErr[msg.i] = msg.s, msg.err
		next := v.estimateFrom(msg.i + 1)
		v.refresh()
		if msg.err != nil {
			return tea.Batch(next, status(v.tables[msg.i].Name+": oa estimate: "+msg.err.Error(), true))
		}
		return next
	case tea.KeyPressMsg:
		if key.Matches(msg, v.env.Keys.Merge) {
			if t := v.Selected(); t != nil {
				return func() tea.Msg { return OpenMergedMsg{Table: t} }
			}
			return nil
		}
		if key.Matches(msg, v.env.Keys.Open) {
			if t := v.Selected(); t != nil {
				return func() tea.Msg { return OpenTableMsg{Table: t} }
			}
			if u := v.selectedUnreadable(); u != nil {
				return status(u.Name()+" could not be opened: "+u.Err.Error(), true)
			}
			return nil
		}
	}
	if mv := navigation(msg, v.env.Keys); mv.ok {
		c := cursor{pos: v.tbl.Cursor()}
		c.apply(mv, len(v.tables)+len(v.unreadable), v.tbl.Height())
		v.tbl.SetCursor(c.pos)
		v.refresh()
	}
	return nil
}

func (v *Sstables) View() string {
	detail := v.detail()
	// The table gives up rows when the detail needs more lines (a long
	// explanation at a narrow width), so that none is cut off.
	v.tbl.SetHeight(max(v.h-1-max(len(detail), detailHeight-1), 3))
	lines := strings.Split(v.tbl.View(), "\n")
	lines = append(lines, "")
	return frame(append(lines, detail...), v.w, v.h)
}

// detail is the lines about the selected sstable.
func (v *Sstables) detail() []string {
	th := v.env.Theme
	var lines []string
	if u := v.selectedUnreadable(); u != nil {
		lines = append(lines, " "+th.Crumb.Render(u.Name())+" (could not be opened)", "   "+th.Dim.Render(u.Path))
		// The path is on the line above; the error need not repeat it.
		for _, l := range wrap(strings.TrimPrefix(u.Err.Error(), u.Path+": "), v.w-4) {
			lines = append(lines, "   "+th.Error.Render(l))
		}
		return lines
	}
	t := v.Selected()
	if t == nil {
		return nil
	}
	i := v.tbl.Cursor()
	lines = append(lines, " "+th.Crumb.Render(t.Name)+" (version "+t.Version()+")", "   "+th.Dim.Render(t.DataPath()))
	if m, err := t.Metadata(); err == nil {
		lines = append(lines,
			fmt.Sprintf("   %s partitions · %s rows · Data.db %s on disk · %s uncompressed",
				words.Thousands(m.EstimatedKeys), words.Thousands(m.TotalRows), cellfmt.Bytes(m.DataSize), cellfmt.Bytes(m.UncompressedDataSize)),
			fmt.Sprintf("   timestamps %s .. %s", cellfmt.Micros(m.MinTimestamp), cellfmt.Micros(m.MaxTimestamp)),
			fmt.Sprintf("   droppable tombstones %.4f", m.EstimatedDroppable))
		if len(m.Indexes) > 0 {
			var ixs []string
			for _, ix := range m.Indexes {
				ixs = append(ixs, ix.Label()+" "+cellfmt.Bytes(ix.Bytes))
			}
			text := "indexes beside it: " + strings.Join(ixs, " · ") + " (apart from the sizes above; a rewrite leaves them out and Cassandra builds them again)"
			for _, l := range wrap(text, v.w-4) {
				lines = append(lines, "   "+l)
			}
		}
	} else {
		lines = append(lines, "   "+th.Error.Render(err.Error()))
	}
	for _, l := range wrap("as oa: "+v.savingText(i, true), v.w-4) {
		lines = append(lines, "   "+l)
	}
	if s := v.savings[i]; s != nil {
		for _, e := range s.Explain() {
			for k, l := range wrap(e, v.w-7) {
				lead := "   · "
				if k > 0 {
					lead = "     "
				}
				lines = append(lines, lead+l)
			}
		}
	}
	return lines
}

// wrap breaks s into lines of at most width cells, at spaces.
func wrap(s string, width int) []string {
	if width < 10 {
		return []string{s}
	}
	return strings.Split(ansi.Wordwrap(s, width, ""), "\n")
}
