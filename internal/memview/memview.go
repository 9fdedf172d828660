// Package memview shows a memsim report in the terminal (memsim --tui,
// and browse on a saved memsim --json result): the same picture as the
// SVG (bytes per partition on and off heap against the live data, flushes
// per million writes, the cost-per-partition curve where it changes), the
// table, the speed comparison and the run's settings, one tab each.
package memview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/memsim"
)

// Model is the bubbletea model of the view.
type Model struct {
	rep    *memsim.Report
	pic    *memsim.Picture
	th     *theme.Theme
	tabs   []string
	tab    int
	scroll int
	width  int
	height int
}

// New builds the view of a report.
func New(rep *memsim.Report, title string, th *theme.Theme) *Model {
	m := &Model{rep: rep, pic: memsim.NewPicture(rep, title), th: th, width: 100, height: 30}
	if len(rep.Results) > 0 {
		m.tabs = append(m.tabs, "picture", "table")
	}
	if rep.Bench != nil {
		m.tabs = append(m.tabs, "speed")
	}
	m.tabs = append(m.tabs, "settings")
	return m
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.clampScroll()
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "esc", "ctrl+c":
			return m, tea.Quit
		case "tab", "right", "l":
			m.tab = (m.tab + 1) % len(m.tabs)
			m.scroll = 0
		case "shift+tab", "left", "h":
			m.tab = (m.tab + len(m.tabs) - 1) % len(m.tabs)
			m.scroll = 0
		case "down", "j":
			m.scroll++
		case "up", "k":
			m.scroll--
		case "pgdown", "space":
			m.scroll += m.bodyHeight()
		case "pgup":
			m.scroll -= m.bodyHeight()
		case "home", "g":
			m.scroll = 0
		case "end", "G":
			m.scroll = len(m.body())
		default:
			if n := msg.String(); len(n) == 1 && n[0] >= '1' && int(n[0]-'1') < len(m.tabs) {
				m.tab, m.scroll = int(n[0]-'1'), 0
			}
		}
		m.clampScroll()
	}
	return m, nil
}

func (m *Model) bodyHeight() int { return max(m.height-2, 1) }

func (m *Model) clampScroll() {
	m.scroll = max(min(m.scroll, len(m.body())-m.bodyHeight()), 0)
}

// Tab returns the name of the tab shown.
func (m *Model) Tab() string { return m.tabs[m.tab] }

// body is the current tab's lines.
func (m *Model) body() []string {
	var s string
	switch m.tabs[m.tab] {
	case "picture":
		s = m.picture()
	case "table":
		var b bytes.Buffer
		if m.width >= 170 {
			memsim.WriteTable(&b, m.rep.Results)
		} else {
			compactTable(&b, m.rep.Results)
		}
		b.WriteString("\n")
		memsim.WriteReads(&b, m.rep.Results)
		if kc := m.rep.KeyCache; kc != nil {
			fmt.Fprintf(&b, "\nkey cache: %d entries, on heap %s (%.1f B/entry), off heap %s (%.1f B/entry, %d B of it the OHC library's header)\n",
				kc.Entries, words.PrettyMemory(kc.OnHeap, ""), kc.OnHeapPerEntry, words.PrettyMemory(kc.OffHeap, ""), kc.OffHeapPerEntry, kc.OHCEntryHeader)
		}
		s = b.String()
	case "speed":
		var b bytes.Buffer
		memsim.WriteBench(&b, m.rep.Bench)
		s = b.String()
	case "settings":
		j, _ := json.MarshalIndent(m.rep.Settings, "", "  ")
		s = string(j)
	}
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// compactTable is the table's per-partition columns, for windows too
// narrow for the whole of it.
func compactTable(w io.Writer, rs []memsim.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "memtable\tallocation\ton B/p\toff B/p\tlive B/p\tflushes/M\t1st flush op")
	for _, r := range rs {
		first := "never"
		if r.FirstFlushOp >= 0 {
			first = fmt.Sprint(r.FirstFlushOp)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\t%.2f\t%s\n", r.Memtable, r.Allocation,
			r.OnHeapPerPartition, r.OffHeapPerPartition, r.LivePerPartition, r.FlushesPerMillion, first)
	}
	tw.Flush()
}

// picture is the picture drawn to the window's width.
func (m *Model) picture() string {
	labelW, textW := m.pic.TextColumns()
	w := max(m.width-labelW-textW-2, 10)
	st := func(s lipgloss.Style) func(string) string { return func(x string) string { return s.Render(x) } }
	return m.pic.Text(memsim.TextOptions{Width: min(w, 60), On: st(m.th.Bar), Off: st(m.th.Warn), Live: st(m.th.Accent), Dim: st(m.th.Dim)})
}

// View implements tea.Model: the screen on the alternate screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	return v
}

// Render draws the screen.
func (m *Model) Render() string {
	var b strings.Builder
	var tabs []string
	for i, t := range m.tabs {
		label := fmt.Sprintf(" %d %s ", i+1, t)
		if i == m.tab {
			tabs = append(tabs, m.th.Selected.Render("["+strings.TrimSpace(label)+"]"))
		} else {
			tabs = append(tabs, m.th.Dim.Render(label))
		}
	}
	b.WriteString(m.th.Title.Render(" "+m.pic.Title+" ") + " " + strings.Join(tabs, " ") + "\n")
	lines := m.body()
	clip := lipgloss.NewStyle().MaxWidth(m.width)
	end := min(m.scroll+m.bodyHeight(), len(lines))
	for _, l := range lines[m.scroll:end] {
		b.WriteString(clip.Render(l) + "\n")
	}
	for i := end - m.scroll; i < m.bodyHeight(); i++ {
		b.WriteString("\n")
	}
	more := ""
	if end < len(lines) {
		more = fmt.Sprintf("  (%d more lines, ↓/pgdn)", len(lines)-end)
	}
	b.WriteString(m.th.Dim.Render("tab/←→ switch view · 1-"+fmt.Sprint(len(m.tabs))+" jump · ↑↓ scroll · q quit") + more)
	return b.String()
}

// Run shows the report until the user quits.
func Run(rep *memsim.Report, title string) error {
	th := theme.New(theme.Detect(os.Stdout))
	_, err := tea.NewProgram(New(rep, title, th)).Run()
	return err
}

// Load reads a report saved with memsim --json. It reports whether the
// file is one (a JSON object with memsim's settings and results or bench),
// so that a caller can fall back to other readers.
func Load(path string) (*memsim.Report, bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	var rep memsim.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, false, nil
	}
	if rep.Settings.ToolVersion == "" || (len(rep.Results) == 0 && rep.Bench == nil) {
		return nil, false, nil
	}
	return &rep, true, nil
}
