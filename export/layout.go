package export

import "github.com/sstabletool/sstabletool/format/cqltype"

// layout holds every fixed piece of sstabledump's output for one style,
// computed once: separators, indentation, member names and brackets. The
// renderer only appends these and the values between them.
//
// The pretty style is Jackson's DefaultPrettyPrinter as sstabledump
// configures it: `"name" : value`, two-space indents, members of the
// partition, rows and bounds on lines of their own, and the key,
// clustering, liveness, deletion and cell objects on one line with a
// space inside their brackets ("[ ]" when empty). The compact style (JSON
// lines) has no whitespace at all.
type layout struct {
	pretty bool

	docOpen, docEmptyClose, docClose []byte
	partFirst, partNext              []byte // before a partition object

	partHead     []byte // `{"table kind":"REGULAR","partition":{"key":[`
	position     []byte // before the partition's position
	partDeletion []byte // before the partition's deletion_info object
	partMid      []byte // closes "partition", opens "rows"
	rowFirst     []byte // before the first element of "rows"
	rowNext      []byte
	rowsEmpty    []byte // closes an empty "rows"
	rowsEnd      []byte
	partEnd      []byte // closes the partition object (and the line in JSON lines)

	// one-line arrays and objects: key, clustering, paths, liveness,
	// deletion_info, cells
	inFirst, inNext, inArrayEnd, inObjectEnd []byte

	rowHead, staticHead []byte // `{"type":"row","position":`
	clustering          []byte // before a row's clustering array
	liveness            []byte // `,"liveness_info":{"tstamp":`
	ttl, expiresAt      []byte // inside liveness_info and cells
	expired             []byte
	rowDeletion         []byte // before a row's deletion_info object
	rowShadowable       []byte // before ScyllaDB's shadowable_deletion_info object
	markedDeleted       []byte // `"marked_deleted":` after the object's opening brace
	localDeleteTime     []byte // `,"local_delete_time":`
	cells               []byte // before a row's cells array
	cellFirst, cellNext []byte
	cellsEmpty          []byte
	cellsEnd            []byte
	rowEnd              []byte

	cellOpen     []byte // `{"name":` (the column name follows)
	path         []byte // `,"path":[` and the first element's separator
	value        []byte
	tstamp       []byte
	cellDeletion []byte // `,"deletion_info":{"local_delete_time":`
	colDeletion  []byte // `,"deletion_info":{` of a complex column deletion

	markerHead        []byte // `{"type":`
	boundStart        []byte // `,"start":{"type":`
	boundEnd          []byte // `,"end":{"type":`
	boundClustering   []byte // before a bound's clustering array
	boundDeletion     []byte // before a bound's deletion_info object
	boundClose        []byte
	markerEnd         []byte
	rangeBound        []byte // `"range_tombstone_bound"`
	rangeBoundary     []byte
	inclusive         []byte
	exclusive         []byte
	trueLit, falseLit []byte
	nullLit, starLit  []byte
}

func newLayout(pretty bool) *layout {
	nl := func(depth int) string {
		if !pretty {
			return ""
		}
		b := []byte{'\n'}
		for i := 0; i < depth; i++ {
			b = append(b, ' ', ' ')
		}
		return string(b)
	}
	colon := ":"
	if pretty {
		colon = " : "
	}
	q := func(s string) string { return string(cqltype.AppendJSONString(nil, s)) }
	// member is a member of an object laid out on lines of its own, at
	// depth; first members have no comma.
	member := func(depth int, name string, first bool) string {
		s := nl(depth) + q(name) + colon
		if !first {
			s = "," + s
		}
		return s
	}
	// inline is a member of a one-line object.
	inline := func(name string, first bool) string {
		switch {
		case pretty && first:
			return " " + q(name) + colon
		case pretty:
			return ", " + q(name) + colon
		case first:
			return q(name) + colon
		}
		return "," + q(name) + colon
	}
	// closing brackets of multi-line containers whose contents sit at depth+1
	closeAt := func(depth int, c string) string { return nl(depth) + c }
	emptyClose := func(c string) string {
		if pretty {
			return " " + c
		}
		return c
	}
	inEnd := func(c string) string {
		if pretty {
			return " " + c
		}
		return c
	}
	l := &layout{pretty: pretty}
	b := func(s string) []byte { return []byte(s) }

	if pretty {
		l.docOpen, l.docEmptyClose, l.docClose = b("["), b(" ]\n"), b(closeAt(0, "]")+"\n")
		l.partFirst, l.partNext = b(nl(1)), b(","+nl(1))
	} else {
		l.docOpen, l.docEmptyClose, l.docClose = b(""), b(""), b("")
		l.partFirst, l.partNext = b(""), b("")
	}
	l.partHead = b("{" + member(2, "table kind", true) + q("REGULAR") + member(2, "partition", false) + "{" + member(3, "key", true) + "[")
	l.position = b(member(3, "position", false))
	l.partDeletion = b(member(3, "deletion_info", false) + "{")
	l.partMid = b(closeAt(2, "}") + member(2, "rows", false) + "[")
	l.rowFirst, l.rowNext = b(nl(3)), b(","+nl(3))
	l.rowsEmpty, l.rowsEnd = b(emptyClose("]")), b(closeAt(2, "]"))
	l.partEnd = b(closeAt(1, "}"))
	if !pretty {
		l.partEnd = b("}\n")
	}

	if pretty {
		l.inFirst, l.inNext = b(" "), b(", ")
	} else {
		l.inFirst, l.inNext = b(""), b(",")
	}
	l.inArrayEnd, l.inObjectEnd = b(inEnd("]")), b(inEnd("}"))

	l.rowHead = b("{" + member(4, "type", true) + q("row") + member(4, "position", false))
	l.staticHead = b("{" + member(4, "type", true) + q("static_block") + member(4, "position", false))
	l.clustering = b(member(4, "clustering", false) + "[")
	l.liveness = b(member(4, "liveness_info", false) + "{" + inline("tstamp", true))
	l.ttl = b(inline("ttl", false))
	l.expiresAt = b(inline("expires_at", false))
	l.expired = b(inline("expired", false))
	l.rowDeletion = b(member(4, "deletion_info", false) + "{")
	l.rowShadowable = b(member(4, "shadowable_deletion_info", false) + "{")
	l.markedDeleted = b(inline("marked_deleted", true))
	l.localDeleteTime = b(inline("local_delete_time", false))
	l.cells = b(member(4, "cells", false) + "[")
	l.cellFirst, l.cellNext = b(nl(5)), b(","+nl(5))
	l.cellsEmpty, l.cellsEnd = b(emptyClose("]")), b(closeAt(4, "]"))
	l.rowEnd = b(closeAt(3, "}"))

	l.cellOpen = b("{" + inline("name", true))
	l.path = b(inline("path", false) + "[" + string(l.inFirst))
	l.value = b(inline("value", false))
	l.tstamp = b(inline("tstamp", false))
	l.cellDeletion = b(inline("deletion_info", false) + "{" + inline("local_delete_time", true))
	l.colDeletion = b(inline("deletion_info", false) + "{")

	l.markerHead = b("{" + member(4, "type", true))
	l.boundStart = b(member(4, "start", false) + "{" + member(5, "type", true))
	l.boundEnd = b(member(4, "end", false) + "{" + member(5, "type", true))
	l.boundClustering = b(member(5, "clustering", false) + "[")
	l.boundDeletion = b(member(5, "deletion_info", false) + "{")
	l.boundClose = b(closeAt(4, "}"))
	l.markerEnd = b(closeAt(3, "}"))
	l.rangeBound, l.rangeBoundary = b(q("range_tombstone_bound")), b(q("range_tombstone_boundary"))
	l.inclusive, l.exclusive = b(q("inclusive")), b(q("exclusive"))
	l.trueLit, l.falseLit, l.nullLit, l.starLit = b("true"), b("false"), b("null"), b(q("*"))
	return l
}

var (
	prettyLayout  = newLayout(true)
	compactLayout = newLayout(false)
)
