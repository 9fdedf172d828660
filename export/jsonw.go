package export

import (
	"bufio"
	"strconv"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

// jsonw writes JSON in the layout Jackson's DefaultPrettyPrinter gives
// sstabledump ("key" : value, two-space indents, some objects and arrays
// kept on one line), or compact for JSON lines. It writes straight to a
// bufio.Writer so a dump never builds a document in memory.
type jsonw struct {
	w      *bufio.Writer
	pretty bool
	depth  int
	// per nesting level: whether something was written, whether compact
	first   []bool
	compact []bool
	scratch []byte
}

func newJSONW(w *bufio.Writer, pretty bool) *jsonw { return &jsonw{w: w, pretty: pretty} }

func (j *jsonw) newline() {
	j.w.WriteByte('\n')
	for i := 0; i < j.depth; i++ {
		j.w.WriteString("  ")
	}
}

// sep writes what goes before a new member or element.
func (j *jsonw) sep() {
	n := len(j.first)
	if n == 0 {
		return
	}
	if !j.first[n-1] {
		j.w.WriteByte(',')
	}
	j.first[n-1] = false
	if !j.pretty {
		return
	}
	if j.compact[n-1] {
		j.w.WriteByte(' ')
	} else {
		j.newline()
	}
}

func (j *jsonw) open(c byte, compact bool) {
	j.w.WriteByte(c)
	j.depth++
	j.first = append(j.first, true)
	j.compact = append(j.compact, compact || j.inCompact())
}

func (j *jsonw) inCompact() bool { return len(j.compact) > 0 && j.compact[len(j.compact)-1] }

func (j *jsonw) close(c byte) {
	n := len(j.first)
	empty, compact := j.first[n-1], j.compact[n-1]
	j.first, j.compact = j.first[:n-1], j.compact[:n-1]
	j.depth--
	if j.pretty {
		switch {
		case compact && !empty:
			j.w.WriteByte(' ')
		case !compact && !empty:
			j.newline()
		case empty:
			j.w.WriteByte(' ')
		}
	}
	j.w.WriteByte(c)
}

// BeginObject starts an object as a value (after Field or in an array).
func (j *jsonw) BeginObject(compact bool) { j.open('{', compact) }
func (j *jsonw) EndObject()               { j.close('}') }
func (j *jsonw) BeginArray(compact bool)  { j.open('[', compact) }
func (j *jsonw) EndArray()                { j.close(']') }

// Elem starts an array element.
func (j *jsonw) Elem() { j.sep() }

// Field writes a member name.
func (j *jsonw) Field(name string) {
	j.sep()
	j.writeString(name)
	if j.pretty {
		j.w.WriteString(" : ")
	} else {
		j.w.WriteByte(':')
	}
}

func (j *jsonw) String(s string) { j.writeString(s) }
func (j *jsonw) Int(v int64)     { j.w.Write(strconv.AppendInt(j.scratch[:0], v, 10)) }
func (j *jsonw) Bool(v bool)     { j.w.WriteString(strconv.FormatBool(v)) }
func (j *jsonw) Raw(b []byte)    { j.w.Write(b) }

func (j *jsonw) writeString(s string) {
	j.scratch = cqltype.AppendJSONString(j.scratch[:0], s)
	j.w.Write(j.scratch)
}
