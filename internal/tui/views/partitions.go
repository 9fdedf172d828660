package views

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/words"
)

// syncLimit is the list length up to which sorting and filtering run in
// Update itself; longer lists sort and filter in the background so that a
// keystroke never waits for them.
const syncLimit = 20000

type inputMode int

const (
	inputNone inputMode = iota
	inputFilter
	inputToken
)

// Partitions is the table of one sstable's partitions with a size
// histogram, sorting, a key filter, token jumps and a background count of
// rows, cells and tombstones.
type Partitions struct {
	env   *Env
	t     *catalog.Table
	w, h  int
	start time.Time

	list    *catalog.List
	listErr error
	hist    []catalog.Bucket

	sortKey catalog.SortKey
	base    []int32 // current sort order
	order   []int32 // base after the filter
	sorted  map[catalog.SortKey][]int32
	texts   []string // lowercased key texts for the filter, built on first use
	filter  string
	gen     int // generation of sort/filter requests; stale results are dropped
	busy    string

	mode  inputMode
	input textinput.Model
	cur   cursor

	scanCh       chan catalog.ScanBatch
	cancel       context.CancelFunc
	scanDone     int64
	scanTotal    int64
	scanFinished bool
	scanErrs     int
	scanTook     time.Duration
	bar          progress.Model

	keyW, tokenW int // widest key and token text seen in a sample
}

// NewPartitions returns the partitions view of t; Init lists the partitions.
func NewPartitions(env *Env, t *catalog.Table) *Partitions {
	in := textinput.New()
	in.Prompt = ""
	// The theme's styles (none: the text as typed), and a steady cursor: a
	// blinking one would redraw the screen twice a second.
	var st textinput.Styles
	st.Cursor.Color = lipgloss.NoColor{}
	in.SetStyles(st)
	in.CharLimit = 256
	// The bar in the theme's colour, and in none without colours.
	full, empty := color.Color(lipgloss.Color("12")), color.Color(lipgloss.Color("#606060"))
	if !env.Theme.Color {
		full, empty = lipgloss.NoColor{}, lipgloss.NoColor{}
	}
	bar := progress.New(progress.WithColors(full), progress.WithoutPercentage(), progress.WithFillCharacters('█', '░'))
	bar.EmptyColor = empty
	return &Partitions{env: env, t: t, input: in, bar: bar, sorted: map[catalog.SortKey][]int32{}, start: time.Now()}
}

type listedMsg struct {
	owner *Partitions
	list  *catalog.List
	order []int32
	err   error
}

type scanMsg struct {
	owner *Partitions
	batch catalog.ScanBatch
}

type sortedMsg struct {
	owner *Partitions
	gen   int
	key   catalog.SortKey
	final bool
	base  []int32
	order []int32
	texts []string
}

type textsMsg struct {
	owner *Partitions
	texts []string
}

func (m listedMsg) Owner() View { return m.owner }
func (m textsMsg) Owner() View  { return m.owner }
func (m scanMsg) Owner() View   { return m.owner }
func (m sortedMsg) Owner() View { return m.owner }

// Init lists the partitions from Index.db in the background, sorted by size.
func (p *Partitions) Init() tea.Cmd {
	t := p.t
	return func() tea.Msg {
		l, err := t.ListPartitions()
		m := listedMsg{owner: p, list: l, err: err}
		if l != nil {
			m.order = catalog.Order(l.Len(), l.Values(catalog.BySize))
		}
		return m
	}
}

func (p *Partitions) Title() string         { return p.t.Name }
func (p *Partitions) Table() *catalog.Table { return p.t }
func (p *Partitions) Capturing() bool       { return p.mode != inputNone }
func (p *Partitions) SetSize(w, h int)      { p.w, p.h = w, h; p.cur.clamp(len(p.order), p.rowsHeight()) }

func (p *Partitions) Keys() []key.Binding {
	k := p.env.Keys
	if p.mode != inputNone {
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
	}
	return []key.Binding{k.Open, k.Bytes, k.Sort, k.Filter, k.Token, k.Metadata}
}

// Close stops the background scan.
func (p *Partitions) Close() {
	if p.cancel != nil {
		p.cancel()
	}
}

// List is the listed partitions (nil while listing).
func (p *Partitions) List() *catalog.List { return p.list }

// Order is the partition indexes in display order.
func (p *Partitions) Order() []int32 { return p.order }

// ScanFinished reports whether every partition has been counted.
func (p *Partitions) ScanFinished() bool { return p.scanFinished }

// Selected is the list index of the selected partition, or -1.
func (p *Partitions) Selected() int {
	if p.cur.pos < 0 || p.cur.pos >= len(p.order) {
		return -1
	}
	return int(p.order[p.cur.pos])
}

func (p *Partitions) waitScan() tea.Cmd {
	ch := p.scanCh
	return func() tea.Msg {
		b, ok := <-ch
		if !ok {
			return nil
		}
		return scanMsg{owner: p, batch: b}
	}
}

func (p *Partitions) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case listedMsg:
		return p.listed(msg)
	case scanMsg:
		return p.scanned(msg.batch)
	case textsMsg:
		p.texts = msg.texts
		if p.filter != "" {
			return p.refilter()
		}
		return nil
	case sortedMsg:
		if msg.gen != p.gen {
			return nil
		}
		p.busy = ""
		if msg.texts != nil {
			p.texts = msg.texts
		}
		if msg.base != nil {
			p.base = msg.base
			if msg.final {
				p.sorted[msg.key] = msg.base
			}
		}
		p.setOrder(msg.order)
		return nil
	case tea.KeyPressMsg:
		if p.mode != inputNone {
			return p.inputKey(msg)
		}
		return p.key(msg)
	case tea.PasteMsg:
		// Pasted text goes into an open input (and only there, as before
		// Bubble Tea v2, which sent a paste as a key message).
		if p.mode != inputNone {
			return p.inputUpdate(msg)
		}
	case tea.MouseWheelMsg:
		if mv := navigation(msg, p.env.Keys); mv.ok {
			p.cur.apply(mv, len(p.order), p.rowsHeight())
		}
	}
	return nil
}

func (p *Partitions) listed(m listedMsg) tea.Cmd {
	p.list, p.listErr = m.list, m.err
	var cmds []tea.Cmd
	if m.err != nil {
		cmds = append(cmds, status("listing partitions: "+m.err.Error(), true))
	}
	if p.list == nil {
		return tea.Batch(cmds...)
	}
	if p.list.Warning != nil {
		cmds = append(cmds, status(p.list.Warning.Error()+" — listed partitions from Data.db instead", true))
	}
	p.base = m.order
	p.sorted[catalog.BySize] = m.order
	p.setOrder(m.order)
	p.hist = catalog.Histogram(p.list.Sizes)
	p.measure()
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.scanCh = make(chan catalog.ScanBatch, 4)
	p.scanTotal = p.t.S.Data().Length()
	go func(ch chan catalog.ScanBatch) {
		defer close(ch)
		p.t.Scan(ctx, p.list, ch)
	}(p.scanCh)
	cmds = append(cmds, p.waitScan())
	if p.list.Len() > syncLimit {
		// Key texts for the filter, ready before anyone types.
		t, l := p.t, p.list
		cmds = append(cmds, func() tea.Msg { return textsMsg{owner: p, texts: t.KeyTexts(l)} })
	}
	return tea.Batch(cmds...)
}

func (p *Partitions) scanned(b catalog.ScanBatch) tea.Cmd {
	p.list.Apply(b)
	p.scanDone = b.Done
	var cmds []tea.Cmd
	if b.Err != nil {
		p.scanErrs++
		cmds = append(cmds, status(b.Err.Error(), true))
	}
	if !b.Finished {
		return tea.Batch(append(cmds, p.waitScan())...)
	}
	p.scanFinished = true
	p.scanTook = time.Since(p.start)
	if p.sortKey.NeedsCounts() {
		cmds = append(cmds, p.resort(true))
	}
	return tea.Batch(cmds...)
}

// setOrder shows a new display order, keeping the selected partition
// selected when it is still there.
func (p *Partitions) setOrder(order []int32) {
	sel := p.Selected()
	p.order = order
	if sel >= 0 {
		if i := slices.Index(order, int32(sel)); i >= 0 && len(order) <= syncLimit {
			p.cur.pos = i
		}
	}
	p.cur.clamp(len(p.order), p.rowsHeight())
}

// resort computes the order of the current sort key and re-applies the
// filter; small lists inline, large ones in the background.
func (p *Partitions) resort(final bool) tea.Cmd {
	if p.list == nil {
		return nil
	}
	p.gen++
	key, gen := p.sortKey, p.gen
	if o, ok := p.sorted[key]; ok {
		p.base = o
		return p.refilter()
	}
	final = final || !key.NeedsCounts() || p.scanFinished
	vals := p.list.Values(key)
	n := p.list.Len()
	if n <= syncLimit {
		p.base = catalog.Order(n, vals)
		if final {
			p.sorted[key] = p.base
		}
		return p.refilter()
	}
	p.busy = "sorting by " + key.String() + "…"
	f, texts, q := p.filterFunc()
	return func() tea.Msg {
		base := catalog.Order(n, vals)
		order, texts := f(base, texts, q)
		return sortedMsg{owner: p, gen: gen, key: key, final: final, base: base, order: order, texts: texts}
	}
}

// filterFunc returns the filter to apply with what it needs, captured so it
// can run in the background.
func (p *Partitions) filterFunc() (func(base []int32, texts []string, q string) ([]int32, []string), []string, string) {
	t, l := p.t, p.list
	return func(base []int32, texts []string, q string) ([]int32, []string) {
		if q == "" {
			return base, texts
		}
		if texts == nil {
			texts = t.KeyTexts(l)
		}
		return catalog.Filter(base, texts, q), texts
	}, p.texts, p.filter
}

func (p *Partitions) refilter() tea.Cmd {
	f, texts, q := p.filterFunc()
	if p.list.Len() <= syncLimit {
		order, texts := f(p.base, texts, q)
		p.texts = texts
		p.setOrder(order)
		return nil
	}
	p.gen++
	if p.texts == nil && q != "" {
		p.busy = "indexing keys for the filter…" // textsMsg refilters
		return nil
	}
	gen, base := p.gen, p.base
	p.busy = "filtering…"
	return func() tea.Msg {
		order, texts := f(base, texts, q)
		return sortedMsg{owner: p, gen: gen, order: order, texts: texts}
	}
}

func (p *Partitions) key(msg tea.KeyPressMsg) tea.Cmd {
	k := p.env.Keys
	if mv := navigation(msg, k); mv.ok {
		p.cur.apply(mv, len(p.order), p.rowsHeight())
		return nil
	}
	switch {
	case key.Matches(msg, k.Sort):
		p.sortKey = p.sortKey.Next()
		return p.resort(false)
	case key.Matches(msg, k.Filter):
		p.mode = inputFilter
		p.input.SetValue(p.filter)
		p.input.CursorEnd()
		return p.input.Focus()
	case key.Matches(msg, k.Token):
		p.mode = inputToken
		p.input.SetValue("")
		return p.input.Focus()
	case key.Matches(msg, k.Open):
		if i := p.Selected(); i >= 0 {
			return push(NewPartition(p.env, p.t, p.list, i))
		}
	case key.Matches(msg, k.Bytes):
		if i := p.Selected(); i >= 0 {
			return push(NewPartitionBytes(p.env, p.t, p.list.Offsets[i], p.list.Sizes[i], "partition "+p.t.FormatKey(p.list.Keys[i])))
		}
	case key.Matches(msg, k.Merge):
		t := p.t
		return func() tea.Msg { return OpenMergedMsg{Table: t} }
	}
	return nil
}

func (p *Partitions) inputKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.Code {
	case tea.KeyEscape:
		mode := p.mode
		p.mode = inputNone
		p.input.Blur()
		if mode == inputFilter && p.filter != "" {
			p.filter = ""
			return p.refilter()
		}
		return nil
	case tea.KeyEnter:
		mode := p.mode
		p.mode = inputNone
		p.input.Blur()
		if mode == inputToken {
			return p.jumpToToken(strings.TrimSpace(p.input.Value()))
		}
		return nil
	}
	return p.inputUpdate(msg)
}

// inputUpdate gives a key or a paste to the open input, and refilters
// when the filter changed.
func (p *Partitions) inputUpdate(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	if p.mode == inputFilter && p.input.Value() != p.filter && p.list != nil {
		p.filter = p.input.Value()
		return tea.Batch(cmd, p.refilter())
	}
	return cmd
}

func (p *Partitions) jumpToToken(s string) tea.Cmd {
	if s == "" || p.list == nil {
		return nil
	}
	tok, err := p.t.S.Partitioner().ParseToken(s)
	if err != nil {
		return status(fmt.Sprintf("token %q: %v", s, err), true)
	}
	i := p.t.SeekToken(p.list, tok)
	if i >= p.list.Len() {
		return status("no partition has a token at or after "+s, true)
	}
	pos := slices.Index(p.order, int32(i))
	if pos < 0 {
		return status("the partition at token "+s+" is hidden by the filter", true)
	}
	p.cur.pos = pos
	p.cur.clamp(len(p.order), p.rowsHeight())
	return status(fmt.Sprintf("token %s → partition %s (token %s)", s, p.t.FormatKey(p.list.Keys[i]), p.t.Token(p.list.Keys[i])), false)
}

// layout: info line, histogram (3 lines when there is room), column
// header, rows, and a progress or input line at the bottom.
func (p *Partitions) histHeight() int {
	if p.h >= 14 && len(p.hist) > 0 {
		return 3
	}
	return 0
}

func (p *Partitions) rowsHeight() int { return max(p.h-3-p.histHeight(), 1) }

func (p *Partitions) View() string {
	th := p.env.Theme
	if p.list == nil {
		msg := "reading Index.db…"
		if p.listErr != nil {
			msg = th.Error.Render(p.listErr.Error())
		}
		return frame([]string{" " + msg}, p.w, p.h)
	}
	lines := make([]string, 0, p.h)
	lines = append(lines, p.infoLine())
	if p.histHeight() > 0 {
		lines = append(lines, p.histogram()...)
	}
	cols := p.columns()
	lines = append(lines, th.Header.Render(Fit(cols.header(p.t.KeyHeader()), p.w)))
	rows := p.rowsHeight()
	for r := 0; r < rows; r++ {
		pos := p.cur.top + r
		if pos >= len(p.order) {
			lines = append(lines, "")
			continue
		}
		lines = append(lines, p.row(cols, pos))
	}
	lines = append(lines, p.bottomLine())
	return frame(lines, p.w, p.h)
}

func (p *Partitions) infoLine() string {
	th := p.env.Theme
	l := p.list
	s := fmt.Sprintf(" %s partitions (%s) · %s · sort: %s",
		words.Thousands(int64(l.Len())), l.Source, cellfmt.Human(p.t.S.Data().Length()), th.Accent.Render(p.sortKey.String()))
	if p.sortKey != catalog.ByToken {
		s += " ▼"
	}
	if p.sortKey.NeedsCounts() && !p.scanFinished {
		s += th.Warn.Render(" (partial: counting)")
	}
	if p.filter != "" {
		s += fmt.Sprintf(" · filter %q: %s", p.filter, words.PluralGrouped(len(p.order), "match"))
	}
	if p.busy != "" {
		s += " · " + th.Warn.Render(p.busy)
	}
	return s
}

// histogram draws partition counts per power-of-two size bucket on a log
// scale, two lines of eighth blocks, with the selected partition's bucket
// highlighted and the range under it.
func (p *Partitions) histogram() []string {
	th := p.env.Theme
	const label = " sizes "
	n := len(p.hist)
	bw := max(1, min(4, (p.w-len(label)-30)/max(n, 1)))
	maxCount := 0
	for _, b := range p.hist {
		maxCount = max(maxCount, b.Count)
	}
	sel := -1
	if i := p.Selected(); i >= 0 {
		sz := p.list.Sizes[i]
		for j, b := range p.hist {
			if sz >= b.Lo && sz < b.Hi {
				sel = j
			}
		}
	}
	const blocks = " ▁▂▃▄▅▆▇█"
	br := []rune(blocks)
	var top, bottom strings.Builder
	top.WriteString(label)
	bottom.WriteString(" count ")
	for j, b := range p.hist {
		level := 0
		if b.Count > 0 {
			level = max(1, int(math.Ceil(16*math.Log1p(float64(b.Count))/math.Log1p(float64(maxCount)))))
		}
		t, u := ' ', br[min(level, 8)]
		if level > 8 {
			t = br[level-8]
		}
		style := th.Bar
		if j == sel {
			style = th.Accent
		}
		top.WriteString(style.Render(strings.Repeat(string(t), bw)))
		bottom.WriteString(style.Render(strings.Repeat(string(u), bw)))
	}
	total := int64(0)
	for _, s := range p.list.Sizes {
		total += s
	}
	first, last := p.hist[0], p.hist[n-1]
	axis := fmt.Sprintf(" %s … <%s", cellfmt.Human(first.Lo), cellfmt.Human(last.Hi))
	if sel >= 0 {
		axis += fmt.Sprintf(" · selected bucket %s..%s: %s", cellfmt.Human(p.hist[sel].Lo), cellfmt.Human(p.hist[sel].Hi),
			words.PluralGrouped(p.hist[sel].Count, "partition"))
	}
	sidebar := fmt.Sprintf("  largest %s", cellfmt.Human(slices.Max(p.list.Sizes)))
	sidebar2 := fmt.Sprintf("  mean %s", cellfmt.Human(total/int64(max(len(p.list.Sizes), 1))))
	return []string{top.String() + th.Dim.Render(sidebar), bottom.String() + th.Dim.Render(sidebar2), th.Dim.Render(axis)}
}

// columns sizes the table to the width: numbers keep their width, key and
// token share what is left.
type partCols struct {
	key, token, offset, size, rows, cells, tombs, del int
	exact                                             bool
}

func (p *Partitions) columns() partCols {
	c := partCols{offset: 10, size: 9, rows: 7, cells: 8, tombs: 6, del: 4}
	if p.w >= 120 {
		c.offset, c.size, c.rows, c.cells, c.tombs, c.exact = 14, 15, 10, 11, 10, true
	}
	fixed := len(theme.Cursor) + c.offset + c.size + c.rows + c.cells + c.tombs + c.del + 7
	rest := max(p.w-fixed, 10)
	// Key and token share the rest, each no wider than its widest text
	// (measured once on a sample), the key first.
	c.token = max(min(rest*2/5, p.tokenW), 5)
	c.key = max(min(rest-c.token, p.keyW), 5)
	c.token = max(min(rest-c.key, p.tokenW), 5)
	return c
}

// measure samples keys and tokens for the column widths.
func (p *Partitions) measure() {
	p.keyW, p.tokenW = ansi.StringWidth(p.t.KeyHeader()), len("TOKEN")
	n := p.list.Len()
	step := max(1, n/2000)
	for i := 0; i < n; i += step {
		p.keyW = max(p.keyW, ansi.StringWidth(p.t.FormatKey(p.list.Keys[i])))
		p.tokenW = max(p.tokenW, ansi.StringWidth(p.t.Token(p.list.Keys[i])))
	}
}

func (c partCols) header(key string) string {
	return theme.NoCursor + Fit(key, c.key) + " " + Fit("TOKEN", c.token) + " " + alignRight("OFFSET", c.offset) + " " +
		alignRight("SIZE", c.size) + " " + alignRight("ROWS", c.rows) + " " + alignRight("CELLS", c.cells) + " " +
		alignRight("TOMBS", c.tombs) + " " + Fit("DEL", c.del)
}

func (p *Partitions) row(c partCols, pos int) string {
	th := p.env.Theme
	i := p.order[pos]
	l := p.list
	cnt := l.Counts[i]
	num := func(v int64) string {
		if v == catalog.Unknown {
			if cnt.Failed {
				return "err"
			}
			return "…"
		}
		return words.Thousands(v)
	}
	size := cellfmt.Human(l.Sizes[i])
	if c.exact {
		size = words.Thousands(l.Sizes[i])
	}
	del := "?"
	switch cnt.Deleted {
	case 0:
		del = "live"
	case 1:
		del = "DEL"
	}
	if cnt.Failed {
		del = "ERR"
	}
	line := Fit(p.t.FormatKey(l.Keys[i]), c.key) + " " + Fit(p.t.Token(l.Keys[i]), c.token) + " " +
		alignRight(strconv.FormatInt(l.Offsets[i], 10), c.offset) + " " + alignRight(size, c.size) + " " +
		alignRight(num(cnt.Rows), c.rows) + " " + alignRight(num(cnt.Cells), c.cells) + " " +
		alignRight(num(cnt.Tombstones), c.tombs) + " " + Fit(del, c.del)
	if pos == p.cur.pos {
		return th.Selected.Render(theme.Cursor + line)
	}
	if cnt.Failed {
		return th.Error.Render(theme.NoCursor + line)
	}
	return theme.NoCursor + line
}

func (p *Partitions) bottomLine() string {
	th := p.env.Theme
	switch p.mode {
	case inputFilter:
		return " " + th.Key.Render("filter keys:") + " " + p.inputView() + th.Dim.Render(" "+words.PluralGrouped(len(p.order), "match"))
	case inputToken:
		return " " + th.Key.Render("jump to token:") + " " + p.inputView()
	}
	pos := fmt.Sprintf(" %s/%s ", words.Thousands(int64(min(p.cur.pos+1, len(p.order)))), words.Thousands(int64(len(p.order))))
	errs := ""
	if p.scanErrs > 0 {
		errs = th.Error.Render(fmt.Sprintf(" · %d partition(s) failed to decode", p.scanErrs))
	}
	if p.scanFinished {
		return pos + th.Dim.Render(fmt.Sprintf("· counted rows, cells and tombstones of %s partitions in %s",
			words.Thousands(int64(p.list.Len())), p.scanTook.Round(time.Millisecond))) + errs
	}
	label := fmt.Sprintf(" counting rows and cells %3.0f%% (%s of %s)", 100*pct(p.scanDone, p.scanTotal),
		cellfmt.Human(p.scanDone), cellfmt.Human(p.scanTotal))
	barW := max(p.w-len(pos)-len(label)-4, 5)
	p.bar.SetWidth(min(barW, 40))
	return pos + p.bar.ViewAs(pct(p.scanDone, p.scanTotal)) + label + errs
}

// inputView is the open input; its cursor is drawn in reverse video, which
// a plain theme has none of.
func (p *Partitions) inputView() string {
	if !p.env.Theme.Color {
		return ansi.Strip(p.input.View())
	}
	return p.input.View()
}
